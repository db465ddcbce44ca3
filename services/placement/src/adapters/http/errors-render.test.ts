import { PlacementError } from '../../domain/errors';
import { errorMediaType, renderError } from './errors-render';

describe('errors rendered as webob renders them for Placement', () => {
  it.each([
    [undefined, 'json'],
    ['*/*', 'json'],
    ['application/json', 'json'],
    ['application/*', 'json'],
    ['text/html', 'html'],
    ['text/*', 'html'],
    ['text/plain', 'plain'],
    ['application/xml', 'plain'],
    ['text/html;q=0.5, application/json', 'json'],
  ])('Accept %s → %s', (accept, media) => {
    expect(errorMediaType(accept)).toBe(media);
  });
  it('strips tags and newlines from the detail, names the method of a 405 and the Accept of a 406', () => {
    const json = (e: PlacementError, accept?: string) =>
      (
        JSON.parse(renderError(e, { major: 1, minor: 23 }, 'req-1', accept, { method: 'PATCH' }).body) as {
          errors: Array<{ detail: string }>;
        }
      ).errors[0]?.detail;
    expect(json(new PlacementError(400, 'a\nb'))).toBe(
      'The server could not comply with the request since it is either malformed or otherwise incorrect.\n\n a b  ',
    );
    expect(json(new PlacementError(405, ''))).toBe('The method PATCH is not allowed for this resource. \n\n ');
    expect(json(new PlacementError(406, 'Only application/json is provided'), 'application/*')).toBe(
      'The resource could not be generated that was acceptable to your browser (content of type application/*. \n\n Only application/json is provided',
    );
  });
});

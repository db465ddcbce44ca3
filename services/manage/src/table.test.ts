import { maskPassword, renderTable } from './table';

describe('renderTable', () => {
  it('draws a PrettyTable box with centred cells, None and True/False', () => {
    expect(
      renderTable(
        ['Name', 'Disabled'],
        [
          ['cell0', false],
          [null, true],
        ],
      ),
    ).toBe(
      [
        '+-------+----------+',
        '|  Name | Disabled |',
        '+-------+----------+',
        '| cell0 |  False   |',
        '|  None |   True   |',
        '+-------+----------+',
      ].join('\n'),
    );
  });

  it('draws an empty table', () => {
    expect(renderTable(['Hostname'], [])).toBe('+----------+\n| Hostname |\n+----------+\n+----------+');
  });
});

describe('maskPassword', () => {
  it.each([
    ['postgres://nova:secret@db:5432/nova_cell1', 'postgres://nova:****@db:5432/nova_cell1'],
    ['amqp://u:p%40ss@127.0.0.1:5672/cell1?x=1', 'amqp://u:****@127.0.0.1:5672/cell1?x=1'],
    ['amqp://user@host/vh', 'amqp://user@host/vh'],
    ['amqp://host:5672/vh', 'amqp://host:5672/vh'],
    ['none:///', 'none:///'],
    ['not a url', 'not a url'],
  ])('%s -> %s', (url, masked) => {
    expect(maskPassword(url)).toBe(masked);
  });
});

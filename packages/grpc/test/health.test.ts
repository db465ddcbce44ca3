import { type ClientReadableStream, Metadata, credentials } from '@grpc/grpc-js';
import { EchoServiceService } from '@cellsched/wire';
import {
  FailureError,
  GrpcStatus,
  HealthClient,
  type HealthCheckRequest,
  type HealthCheckResponse,
  HealthService,
  ServingStatus,
  createGrpcClient,
} from '@cellsched/grpc';
import { startEcho } from './echo-fixture';

function nextMessage(stream: ClientReadableStream<HealthCheckResponse>): Promise<HealthCheckResponse> {
  return new Promise((resolve, reject) => {
    stream.once('data', resolve);
    stream.once('error', reject);
  });
}

describe('grpc.health.v1.Health', () => {
  let server: Awaited<ReturnType<typeof startEcho>>;
  let health: ReturnType<typeof createGrpcClient<typeof HealthService>>;
  const echoName = EchoServiceService.echo.path.split('/')[1] ?? '';

  beforeAll(async () => {
    server = await startEcho('h');
    health = createGrpcClient(HealthClient, { addresses: [server.address], deadlineMs: 2000 });
  });
  afterAll(async () => {
    health.close();
    await server.shutdown(1000);
  });

  it('answers SERVING for the server and for each service it hosts', async () => {
    expect(await health.check({ service: '' })).toEqual({ status: ServingStatus.SERVING });
    expect(await health.check({ service: echoName })).toEqual({ status: ServingStatus.SERVING });
  });

  it('answers NOT_FOUND for an unknown service', async () => {
    const err = await health.check({ service: 'no.such.Service' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FailureError);
    expect((err as FailureError).status).toBe(GrpcStatus.NOT_FOUND);
  });

  it('streams status changes to a Watch caller', async () => {
    const raw = new HealthClient(server.address, credentials.createInsecure());
    const stream = raw.makeServerStreamRequest<HealthCheckRequest, HealthCheckResponse>(
      HealthService.watch.path,
      HealthService.watch.requestSerialize,
      HealthService.watch.responseDeserialize,
      { service: echoName },
      new Metadata(),
      {},
    );
    try {
      expect(await nextMessage(stream)).toEqual({ status: ServingStatus.SERVING });
      const changed = nextMessage(stream);
      server.health.setStatus(echoName, ServingStatus.NOT_SERVING);
      expect(await changed).toEqual({ status: ServingStatus.NOT_SERVING });
      expect(await health.check({ service: echoName })).toEqual({ status: ServingStatus.NOT_SERVING });
      server.health.setStatus(echoName, ServingStatus.SERVING);
    } finally {
      stream.cancel();
      raw.close();
    }
  });
});

/** One method of a ts-proto `outputServices=grpc-js` service definition. */
export interface MethodDefinitionLike<Req, Res> {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestSerialize(value: Req): Buffer;
  requestDeserialize(value: Buffer): Req;
  responseSerialize(value: Res): Buffer;
  responseDeserialize(value: Buffer): Res;
}

/** The request type of a method definition. */
export type RequestOf<M> = M extends { requestDeserialize(value: Buffer): infer R } ? R : never;

/** The response type of a method definition. */
export type ResponseOf<M> = M extends { responseDeserialize(value: Buffer): infer R } ? R : never;

/** Keys of a service definition whose methods are unary (the only kind these helpers wrap). */
export type UnaryMethodKeys<S> = {
  [K in keyof S]: S[K] extends { requestStream: false; responseStream: false } ? K : never;
}[keyof S] &
  string;

/** `/cellsched.v1.EchoService/Echo` → `cellsched.v1.EchoService`. */
export function serviceNameOf(definition: object): string {
  const first = Object.values(definition)[0] as { path?: unknown } | undefined;
  const path = typeof first?.path === 'string' ? first.path : '';
  const match = /^\/([^/]+)\//.exec(path);
  if (!match?.[1]) throw new Error('not a grpc-js service definition: no method path found');
  return match[1];
}

/** The unary methods of a definition, as `[key, method]` pairs. */
export function unaryMethods(definition: object): Array<[string, MethodDefinitionLike<unknown, unknown>]> {
  return Object.entries(definition as Record<string, MethodDefinitionLike<unknown, unknown>>).filter(
    ([, m]) => !m.requestStream && !m.responseStream,
  );
}

export { isConnectionError } from './is-connection-error';

/**
 * @cellsched/api-clients: the clients API-level services use to reach each other over the
 * API bus. Cell-level services are lint-forbidden from importing this package (no upcall).
 */
export { SuperConductorClient, type SuperConductorCaster } from './super-conductor-client';

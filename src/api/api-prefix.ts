/** The path every API route is served under (SPEC 9's base URL); health checks and pages are not. */
export const API_PREFIX = '/api/v1';

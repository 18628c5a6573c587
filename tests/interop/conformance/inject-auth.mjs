// Loaded with `node --import` into the conformance runner, which has no option
// for request headers: every fetch it makes carries fixture-server's bearer
// token (IDE_MCP_TOKEN). The server is not weakened for the suite.
const token = process.env.IDE_MCP_TOKEN;
const original = globalThis.fetch;
globalThis.fetch = (input, init = {}) => {
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  headers.set('Authorization', `Bearer ${token}`);
  return original(input, { ...init, headers });
};

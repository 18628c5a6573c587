// Interop: the official MCP TypeScript SDK (1.x, protocol 2025-11-25) over
// Streamable HTTP against fixture-server: `Client` with
// `StreamableHTTPClientTransport` initializes a session (Mcp-Session-Id),
// lists the tools, calls the five read tools and the downstream fixture
// tools, receives a call's progress on the call's event stream, and ends the
// session with DELETE. The SDK validates every result against its schemas.
//
// Usage: node client.mjs URL TOKEN WORKSPACE   (exit 1 naming a failed check)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, token, workspace] = process.argv.slice(2);
const READ = ['checkDocumentDirty', 'getCurrentSelection', 'getDiagnostics', 'getOpenEditors', 'getWorkspaceFolders'];
const FIXTURE = ['add', 'countWords', 'divide', 'fixture.echo', 'forgetEverything', 'greet'];

function check(condition, what, got) {
  if (!condition) {
    throw new Error(`${what}${got === undefined ? '' : `\n    got: ${JSON.stringify(got).slice(0, 2000)}`}`);
  }
}

function text(result, what) {
  check(!result.isError, `${what}: a successful call`, result);
  return result.content[0].text;
}

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'ide-mcp-interop', version: '1.0.0' });
  await client.connect(transport);
  check(transport.sessionId && transport.sessionId.length === 36, 'a session id from initialize', transport.sessionId);
  check(client.getServerVersion().name === 'fixture-server', 'serverInfo', client.getServerVersion());

  const names = (await client.listTools()).tools.map((tool) => tool.name);
  for (const name of [...READ, ...FIXTURE]) {
    check(names.includes(name), `tools/list has ${name}`, names);
  }
  const call = (name, args) => client.callTool({ name, arguments: args });
  const folders = JSON.parse(text(await call('getWorkspaceFolders', {}), 'getWorkspaceFolders'));
  check(folders.rootPath === workspace, 'getWorkspaceFolders', folders);
  check(text(await call('getOpenEditors', {}), 'getOpenEditors') === '{"tabs":[]}', 'getOpenEditors');
  const selection = JSON.parse(text(await call('getCurrentSelection', {}), 'getCurrentSelection'));
  check(selection.success === false, 'getCurrentSelection', selection);
  check(text(await call('getDiagnostics', {}), 'getDiagnostics') === '[]', 'getDiagnostics');
  const dirty = JSON.parse(text(await call('checkDocumentDirty', { filePath: '/nowhere.rs' }), 'checkDocumentDirty'));
  check(dirty.isDirty === false, 'checkDocumentDirty', dirty);

  check(text(await call('add', { a: 2, b: 40 }), 'add') === '42', 'add');
  check(text(await call('greet', { name: 'TS' }), 'greet') === '"Hello, TS"', 'greet');
  check(text(await call('fixture.echo', { text: 'hi' }), 'fixture.echo') === '"Hello: hi"', 'fixture.echo (async)');
  check(text(await call('divide', { numerator: 1, denominator: 4 }), 'divide') === '0.25', 'divide (blocking)');
  const failed = await call('divide', { numerator: 1, denominator: 0 });
  check(failed.isError === true, "a tool's own error", failed);
  const words = await call('countWords', { text: 'a b a' });
  check(words.structuredContent.a === 2 && words.structuredContent.b === 1, 'countWords (structured)', words);
  // Progress: the SDK sends a progressToken when given `onprogress`; the
  // events arrive on the call's POST, as an event stream, before the result.
  const progress = [];
  const done = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
    onprogress: (p) => progress.push([p.progress, p.total, p.message]),
  });
  check(text(done, 'test_tool_with_progress') === '"done"', 'test_tool_with_progress answers', done);
  check(
    JSON.stringify(progress) === JSON.stringify([[0, 100, 'working'], [50, 100, 'working'], [100, 100, 'working']]),
    'progress notifications before the result',
    progress,
  );
  // Calls side by side in one session, each answered on its own POST.
  const echoes = await Promise.all([1, 2, 3, 4].map((n) => call('fixture.echo', { text: String(n) })));
  check(echoes.map((r) => r.content[0].text).join() === '"Hello: 1","Hello: 2","Hello: 3","Hello: 4"', 'parallel calls', echoes);

  await transport.terminateSession();
  check(transport.sessionId === undefined, 'DELETE ended the session', transport.sessionId);
  await client.close();
  console.log('interop: typescript sdk, http (2025-11-25 session): ok');
}

main().catch((error) => {
  console.error(`interop: FAILED (typescript sdk): ${error.stack || error}`);
  process.exit(1);
});

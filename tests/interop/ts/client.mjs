// Interop: the official MCP TypeScript SDK (1.x, protocol 2025-11-25) over
// Streamable HTTP against fixture-server: `Client` with
// `StreamableHTTPClientTransport` initializes a session (Mcp-Session-Id),
// lists the tools, calls the five read tools and the downstream fixture
// tools, receives a call's progress on the call's event stream, lists and
// reads the resources (a fixed URI, a template instance; an unknown URI is
// McpError -32002), lists and gets the prompts, and ends the session with
// DELETE. The SDK validates every result against its schemas.
//
// Usage: node client.mjs URL TOKEN WORKSPACE   (exit 1 naming a failed check)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

const [url, token, workspace] = process.argv.slice(2);
const READ = ['checkDocumentDirty', 'getCurrentSelection', 'getDiagnostics', 'getOpenEditors', 'getWorkspaceFolders'];
const FIXTURE = ['add', 'countWords', 'divide', 'fixture.echo', 'forgetEverything', 'greet'];

function check(condition, what, got) {
  if (!condition) {
    throw new Error(`${what}${got === undefined ? '' : `\n    got: ${JSON.stringify(got).slice(0, 2000)}`}`);
  }
}

// JSON with the keys of every object sorted: the SDK's schemas reorder them.
function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical(value[key])]));
  }
  return value;
}

function same(got, expected, what) {
  check(JSON.stringify(canonical(got)) === JSON.stringify(canonical(expected)), what, got);
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

  // Resources: the fixture's (tests/fixture-tools), the editor's
  // (ide-mcp-tools, no document open) and the conformance suite's
  // (fixture-server), sorted by URI.
  const resources = (await client.listResources()).resources;
  same(
    resources.map((r) => [r.uri, r.name, r.mimeType]),
    [
      ['fixture://greeting', 'greeting', 'text/plain'],
      ['ide://diagnostics', 'diagnostics', 'application/json'],
      ['test://static-binary', 'static_binary', 'image/png'],
      ['test://static-text', 'static_text', 'text/plain'],
    ],
    'resources/list',
  );
  same(
    resources[0],
    { uri: 'fixture://greeting', name: 'greeting', title: 'Greeting', description: "The host's greeting, as a resource.", mimeType: 'text/plain' },
    'resources/list: fixture://greeting as annotated',
  );
  const templates = (await client.listResourceTemplates()).resourceTemplates;
  same(
    templates.map((t) => [t.uriTemplate, t.name, t.mimeType]),
    [
      ['file:///{path}', 'document', 'text/plain'],
      ['fixture://notes/{topic}', 'note', 'text/markdown'],
      ['test://template/{id}/data', 'template_data', 'application/json'],
    ],
    'resources/templates/list',
  );
  same(
    (await client.readResource({ uri: 'fixture://greeting' })).contents,
    [{ uri: 'fixture://greeting', mimeType: 'text/plain', text: 'Hello' }],
    'resources/read fixture://greeting',
  );
  same(
    (await client.readResource({ uri: 'fixture://notes/typescript' })).contents,
    [{ uri: 'fixture://notes/typescript', mimeType: 'text/markdown', text: '# typescript\n\nNothing noted about typescript yet.' }],
    'resources/read of a template instance',
  );
  same(
    (await client.readResource({ uri: 'ide://diagnostics' })).contents,
    [{ uri: 'ide://diagnostics', mimeType: 'application/json', text: '[]' }],
    'resources/read ide://diagnostics',
  );
  try {
    await client.readResource({ uri: 'fixture://nothing' });
    check(false, 'resources/read of an unknown URI throws');
  } catch (error) {
    check(error instanceof McpError && error.code === -32002, 'an unknown URI is McpError -32002', String(error));
    check(error.message.includes('resource not found: `fixture://nothing`'), 'the -32002 names the URI', error.message);
  }
  // Prompts, sorted by name, their arguments by name.
  const prompts = (await client.listPrompts()).prompts;
  same(
    prompts.map((p) => p.name),
    ['fix_diagnostics', 'introduce', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource', 'test_simple_prompt'],
    'prompts/list',
  );
  same(
    prompts[1],
    {
      name: 'introduce',
      title: 'Introduce',
      description: "Asks for a greeting of someone, in the host's words.",
      arguments: [
        { name: 'name', description: 'Whom to greet', required: true },
        { name: 'style', description: 'How; plainly by default', required: false },
      ],
    },
    'prompts/list: introduce and its arguments',
  );
  same(
    await client.getPrompt({ name: 'introduce', arguments: { name: 'TS', style: 'warmly' } }),
    { messages: [{ role: 'user', content: { type: 'text', text: 'Say "Hello, TS" warmly.' } }] },
    'prompts/get introduce',
  );
  const fix = await client.getPrompt({ name: 'fix_diagnostics', arguments: {} });
  same(
    fix.messages[1],
    { role: 'user', content: { type: 'resource', resource: { uri: 'ide://diagnostics', mimeType: 'application/json', text: '[]' } } },
    'prompts/get fix_diagnostics embeds ide://diagnostics',
  );

  await transport.terminateSession();
  check(transport.sessionId === undefined, 'DELETE ended the session', transport.sessionId);
  await client.close();
  console.log('interop: typescript sdk, http (2025-11-25 session): ok');
}

main().catch((error) => {
  console.error(`interop: FAILED (typescript sdk): ${error.stack || error}`);
  process.exit(1);
});

// Interop: the official MCP TypeScript SDK (1.x, protocol 2025-11-25), its
// `Client`, over two transports.
//
// Streamable HTTP against fixture-server: `Client` with
// `StreamableHTTPClientTransport` initializes a session (Mcp-Session-Id),
// lists the tools, calls the five read tools and the downstream fixture
// tools, receives a call's progress on the call's event stream, lists and
// reads the resources (a fixed URI, a template instance; an unknown URI is
// McpError -32002), lists and gets the prompts, and ends the session with
// DELETE. The SDK validates every result against its schemas.
//
// The Claude Code IDE WebSocket of `ide-mcp serve` (mode `ws`): this script
// starts `serve --diagnostics none --open …` on a temporary workspace with
// its own $CLAUDE_CONFIG_DIR, finds the lockfile `<config>/ide/<port>.lock`,
// and connects to ws://127.0.0.1:<port>/ with the lockfile's authToken in the
// x-claude-code-ide-authorization header. The SDK's own
// `WebSocketClientTransport` sends no headers, so `IdeWebSocketTransport`
// below is the SDK's `Transport` over the `ws` package. Over it `Client`
// initializes, lists the tools, lists and reads the resources (the open
// documents and ide://diagnostics; a document by its listed URI and as a
// `file:///{path}` template instance; an unknown URI is McpError -32002),
// lists the prompts and gets fix_diagnostics. SIGTERM then ends the server,
// which removes its lockfile.
//
// Usage: node client.mjs URL TOKEN WORKSPACE   (Streamable HTTP)
//        node client.mjs ws IDE_MCP_BINARY     (the IDE WebSocket)
// Exit 1 naming a failed check.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { JSONRPCMessageSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

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

async function overHttp(url, token, workspace) {
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


// --- the Claude Code IDE WebSocket of `ide-mcp serve` ----------------------

const AUTH_HEADER = 'x-claude-code-ide-authorization';
// What the headless host lists: every IDE tool but `openDiff` (as sdk_client.py's TOOLS).
const IDE_TOOLS = [
  'checkDocumentDirty', 'closeAllDiffTabs', 'close_tab', 'getCurrentSelection', 'getDiagnostics',
  'getLatestSelection', 'getOpenEditors', 'getWorkspaceFolders', 'openFile',
];
// Protocol versions the `claude` CLI accepts (PROTOCOL.md, handshake).
const CLI_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
// An answer, or the whole mode, that takes longer than this is a failure.
const ANSWER_MS = 30_000;
const MODE_MS = 90_000;

/** The SDK's `Transport` over one `ws` connection with headers on the upgrade:
 * one JSON-RPC message per text frame, validated as the SDK's own
 * WebSocketClientTransport validates them, subprotocol `mcp`. */
class IdeWebSocketTransport {
  constructor(url, headers) {
    this.url = url;
    this.headers = headers;
    this.socket = undefined;
    this.protocolVersion = undefined;
  }

  start() {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url, ['mcp'], { headers: this.headers });
      socket.on('error', (error) => {
        if (this.socket === undefined) reject(error);
        else this.onerror?.(error);
      });
      socket.once('open', () => {
        this.socket = socket;
        resolve();
      });
      socket.on('message', (data, isBinary) => {
        let message;
        try {
          check(!isBinary, 'the server sends text frames');
          message = JSONRPCMessageSchema.parse(JSON.parse(data.toString('utf8')));
        } catch (error) {
          this.onerror?.(error);
          return;
        }
        this.onmessage?.(message);
      });
      socket.on('close', () => this.onclose?.());
    });
  }

  send(message) {
    return new Promise((resolve, reject) => {
      if (this.socket?.readyState !== WebSocket.OPEN) {
        reject(new Error('the IDE WebSocket is not open'));
        return;
      }
      this.socket.send(JSON.stringify(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  close() {
    const socket = this.socket;
    if (socket === undefined || socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      socket.once('close', () => resolve());
      socket.close();
    });
  }

  // The Client calls this after initialize with the negotiated version.
  setProtocolVersion(version) {
    this.protocolVersion = version;
  }
}

function lockfiles(config) {
  const dir = join(config, 'ide');
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.lock')).sort().map((name) => join(dir, name)) : [];
}

const fileUri = (path) => `file://${path}`;
// How resources/list names an open document: percent-encoded.
const encodedFileUri = (path) => `file://${path.split('/').map(encodeURIComponent).join('/')}`;

// The server overWebSocket started, killed when the mode's time is up.
let serving;

async function overWebSocket(binary) {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'ide-mcp-interop-ts-')));
  const config = join(tmp, 'config');
  const workspace = join(tmp, 'ws');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  const opened = [
    [join(workspace, 'src', 'main.rs'), 'rust', 'fn main() {}\n'],
    [join(workspace, 'notes café.md'), 'markdown', '# notes\n'],
  ];
  for (const [path, , contents] of opened) writeFileSync(path, contents);
  const env = { ...process.env, CLAUDE_CONFIG_DIR: config };
  delete env.CLAUDE_CODE_SSE_PORT;
  const server = spawn(
    binary,
    ['serve', '--workspace', workspace, '--diagnostics', 'none', ...opened.flatMap(([path]) => ['--open', path])],
    { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  serving = server;
  let log = '';
  server.stdout.on('data', (chunk) => { log += chunk; });
  server.stderr.on('data', (chunk) => { log += chunk; });
  let exit;
  const exited = new Promise((resolve) => server.once('exit', (code, signal) => resolve((exit = { code, signal }))));
  try {
    const deadline = Date.now() + ANSWER_MS;
    let lock;
    while (lock === undefined && Date.now() < deadline) {
      check(exit === undefined, 'ws: the server keeps running', exit);
      const [found] = lockfiles(config);
      if (found !== undefined) {
        try {
          lock = JSON.parse(readFileSync(found, 'utf8'));
        } catch {
          // written atomically, so this should not happen; retry
        }
      }
      if (lock === undefined) await sleep(50);
    }
    check(lock !== undefined, `ws: a lockfile appears in $CLAUDE_CONFIG_DIR/ide within ${ANSWER_MS / 1000} s`, lockfiles(config));
    const found = lockfiles(config);
    check(found.length === 1, 'ws: exactly one lockfile', found);
    const lockPath = found[0];
    const port = Number(basename(lockPath, '.lock'));
    check(lock.pid === server.pid && lock.transport === 'ws', 'ws: the lockfile names the server, transport ws', lock);
    check(typeof lock.authToken === 'string' && lock.authToken.length >= 32, 'ws: the lockfile has an authToken', lock);
    check((statSync(lockPath).mode & 0o777) === 0o600, 'ws: lockfile mode 0600', statSync(lockPath).mode.toString(8));
    const url = `ws://127.0.0.1:${port}/`;

    try {
      await new IdeWebSocketTransport(url, {}).start();
      check(false, 'ws: an upgrade without the token is refused');
    } catch (error) {
      check(String(error.message).includes('Unexpected server response: 401'), 'ws: an upgrade without the token gets HTTP 401', String(error));
    }

    const transport = new IdeWebSocketTransport(url, { [AUTH_HEADER]: lock.authToken });
    const client = new Client({ name: 'ide-mcp-interop', version: '1.0.0' });
    await client.connect(transport, { timeout: ANSWER_MS });
    const options = { timeout: ANSWER_MS };
    check(transport.socket.protocol === 'mcp', 'ws: the server selects the offered subprotocol mcp', transport.socket.protocol);
    check(CLI_VERSIONS.includes(transport.protocolVersion), 'ws: initialize negotiates a version the claude CLI accepts', transport.protocolVersion);
    check(client.getServerVersion().name === 'ide-mcp', 'ws: serverInfo.name is ide-mcp', client.getServerVersion());
    check(client.getServerCapabilities().tools !== undefined, 'ws: capabilities.tools', client.getServerCapabilities());

    const tools = (await client.listTools({}, options)).tools;
    same(tools.map((tool) => tool.name).sort(), IDE_TOOLS, 'ws: tools/list has exactly the IDE tools');
    for (const tool of tools) {
      check(tool.inputSchema.type === 'object' && tool.description, `ws: ${tool.name} has an object inputSchema and a description`, tool);
    }

    same(
      (await client.listResources({}, options)).resources,
      [
        {
          uri: 'ide://diagnostics', name: 'diagnostics', title: 'Diagnostics',
          description: 'Every diagnostic the editor knows now, by file, as `getDiagnostics`\nanswers it: `[{"uri", "diagnostics": […]}, …]`.',
          mimeType: 'application/json',
        },
        ...opened.map(([path, language]) => ({
          uri: encodedFileUri(path), name: basename(path),
          description: `${path} open in the editor (${language}), saved`, mimeType: 'text/plain',
        })),
      ],
      'ws: resources/list is ide://diagnostics and each open document',
    );
    same(
      (await client.listResourceTemplates({}, options)).resourceTemplates.map((t) => [t.uriTemplate, t.name, t.mimeType]),
      [['file:///{path}', 'document', 'text/plain']],
      'ws: resources/templates/list',
    );
    for (const [path, , contents] of opened) {
      // As listed (percent-encoded), and as the template's instance by the path itself.
      for (const uri of [encodedFileUri(path), fileUri(path)]) {
        same(
          (await client.readResource({ uri }, options)).contents,
          [{ uri, mimeType: 'text/plain', text: contents }],
          `ws: resources/read ${uri} is the document's text`,
        );
      }
    }
    same(
      (await client.readResource({ uri: 'ide://diagnostics' }, options)).contents,
      [{ uri: 'ide://diagnostics', mimeType: 'application/json', text: '[]' }],
      'ws: resources/read ide://diagnostics with --diagnostics none',
    );
    const absent = fileUri(join(workspace, 'not-open.txt'));
    try {
      await client.readResource({ uri: absent }, options);
      check(false, 'ws: resources/read of a file not open throws');
    } catch (error) {
      check(error instanceof McpError && error.code === -32002, 'ws: a file not open is McpError -32002', String(error));
      check(error.message === `MCP error -32002: resource not found: \`${absent}\``, 'ws: the -32002 names the URI', error.message);
    }

    same(
      (await client.listPrompts({}, options)).prompts,
      [{
        name: 'fix_diagnostics',
        title: 'Fix the errors in the open files',
        description: 'Fixes the errors the editor reports in the open files, with the current\ndiagnostics embedded in the prompt.',
        arguments: [
          { name: 'file', description: 'Only this file (an absolute path or a `file://` URI)', required: false },
          { name: 'warnings', description: 'Also fix warnings (`yes`), not only errors', required: false },
        ],
      }],
      'ws: prompts/list is fix_diagnostics with the optional file and warnings',
    );
    const file = opened[0][0];
    for (const [args, kinds, scope] of [
      [{}, 'errors', 'the open files'],
      [{ file, warnings: 'yes' }, 'errors and warnings', `\`${file}\``],
    ]) {
      same(
        await client.getPrompt({ name: 'fix_diagnostics', arguments: args }, options),
        {
          description: `Fix the ${kinds} in ${scope}`,
          messages: [
            { role: 'user', content: { type: 'text', text: `The editor reports no ${kinds} in ${scope} right now. Check that the code builds, and fix what does not.` } },
            { role: 'user', content: { type: 'resource', resource: { uri: 'ide://diagnostics', mimeType: 'application/json', text: '[]' } } },
          ],
        },
        `ws: prompts/get fix_diagnostics ${JSON.stringify(args)}`,
      );
    }
    await client.close();

    server.kill('SIGTERM');
    const ended = await Promise.race([exited, sleep(10_000).then(() => undefined)]);
    check(ended !== undefined, 'ws: the server exits within 10 s of SIGTERM');
    check(ended.code === 0, 'ws: the server exits 0 on SIGTERM', ended);
    check(!existsSync(lockPath), 'ws: the lockfile is gone after SIGTERM', lockPath);
    console.log(`interop: typescript sdk, ide websocket (serve, ${transport.protocolVersion}): ok`);
  } catch (error) {
    console.error(`  server output (last lines):\n${log.split('\n').slice(-30).join('\n')}`);
    throw error;
  } finally {
    if (exit === undefined) {
      server.kill('SIGKILL');
      await exited;
    }
    rmSync(tmp, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
let run;
if (args[0] === 'ws') {
  const timer = setTimeout(() => {
    console.error(`interop: FAILED (typescript sdk, ws): not done within ${MODE_MS / 1000} s`);
    serving?.kill('SIGKILL');
    process.exit(1);
  }, MODE_MS);
  run = overWebSocket(args[1]).finally(() => clearTimeout(timer));
} else {
  run = overHttp(...args);
}
run.catch((error) => {
  console.error(`interop: FAILED (typescript sdk): ${error.stack || error}`);
  process.exit(1);
});

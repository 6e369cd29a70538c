// Drives our MCP server with the official MCP TypeScript SDK client, over
// stdio or streamable HTTP: `node mcp_client.mjs stdio|http SERVER`, where
// SERVER is the tests/mcp_server.rs binary (it serves when
// TOOL_RUNTIME_MCP_SERVE is set). Prints one line per check; exits non-zero
// when any fails. The same checks as tests/python/mcp_client.py, as this
// SDK sees them.

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

const [transport, server] = process.argv.slice(2);
const label = `[ts ${transport}] `;
let failures = 0;

function check(name, ok, detail) {
  console.log(`${ok ? "ok  " : "FAIL"} ${label}${name}${ok ? "" : `: ${JSON.stringify(detail)}`}`);
  if (!ok) failures += 1;
}

const textOf = (result) => result.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function connect() {
  const client = new Client({ name: "tool-runtime-ts-check", version: "1.0.0" });
  const env = { ...process.env, TOOL_RUNTIME_MCP_SERVE: transport };
  if (transport === "stdio") {
    await client.connect(new StdioClientTransport({ command: server, env, stderr: "ignore" }));
    return { client, stop: () => client.close() };
  }
  const child = spawn(server, [], { env, stdio: ["ignore", "pipe", "ignore"] });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    lines.on("line", (line) => {
      const found = /listening on (\S+)/.exec(line);
      if (found) resolve(found[1]);
    });
    child.on("exit", (code) => reject(new Error(`the server exited (${code}) before naming its endpoint`)));
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return {
    client,
    stop: async () => {
      await client.close();
      child.kill();
    },
  };
}

const { client, stop } = await connect();
try {
  check("initialize names the server", client.getServerVersion()?.name === "tool-runtime-test", client.getServerVersion());

  const listed = (await client.listTools()).tools;
  const names = listed.map((t) => t.name);
  const expected = ["busy", "cancelled_naps", "disk_usage", "nap", "probe", "render_chart"];
  check("tools/list lists every tool", JSON.stringify([...names].sort()) === JSON.stringify(expected), names);
  const again = (await client.listTools()).tools.map((t) => t.name);
  check("tools/list keeps a stable order", JSON.stringify(again) === JSON.stringify(names), again);
  const probe = listed.find((t) => t.name === "probe");
  const order = ["pattern", "case_sensitive", "max_results", "offset", "threshold", "files", "mode", "window", "labels"];
  check("parameters arrive in declaration order", JSON.stringify(Object.keys(probe?.inputSchema?.properties ?? {})) === JSON.stringify(order), probe?.inputSchema);
  const disk = listed.find((t) => t.name === "disk_usage");
  check("a structured tool has an output schema", disk?.outputSchema?.type === "object", disk);

  let result = await client.callTool({ name: "probe", arguments: { pattern: "*.rs", maxResults: "5" } });
  check("a call needing coercion is bound by the schema", !result.isError && result.structuredContent?.max_results === 5, result);

  result = await client.callTool({ name: "probe", arguments: { max_results: 0, mode: "delete" } });
  check("bad arguments are a tool error the model can read", result.isError === true, result);
  for (const code of ["missing_required:pattern", "out_of_range:max_results", "enum_out_of_range:mode"]) {
    check(`the error lists ${code}`, textOf(result).includes(code), textOf(result));
  }

  // The SDK validates structured content against the advertised output
  // schema: an answer that did not fit would throw here.
  result = await client.callTool({ name: "disk_usage", arguments: {} });
  check("structured content arrives and fits its schema", result.structuredContent?.mounts?.[1]?.label === null, result);

  result = await client.callTool({ name: "render_chart", arguments: { values: [1, "2"] } });
  check("image content arrives", JSON.stringify(result.content.map((b) => b.type)) === '["text","image"]', result);

  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
    check("an unknown tool is a protocol error", false, "no error");
  } catch (e) {
    check("an unknown tool is a protocol error", e instanceof McpError && e.code === -32602 && e.message.includes("no_such_tool"), String(e));
  }

  // A slow call holds up neither a ping nor another call, and its
  // cancellation reaches the tool (order, not timing).
  const before = Number(textOf(await client.callTool({ name: "cancelled_naps", arguments: {} })));
  const abort = new AbortController();
  let slowDone = false;
  const slow = client
    .callTool({ name: "nap", arguments: { millis: 20000 } }, CallToolResultSchema, { signal: abort.signal })
    .then(() => "answered", () => "aborted")
    .finally(() => {
      slowDone = true;
    });
  await sleep(200);
  await client.ping();
  check("a ping is answered while a tool runs", !slowDone, "the slow call had already finished");
  const quick = await client.callTool({ name: "nap", arguments: { millis: 1 } });
  check("a second call finishes before the first", !slowDone && textOf(quick) === "slept 1 ms", textOf(quick));
  abort.abort();
  check("the slow call is abandoned", (await slow) === "aborted", "it was answered");
  let seen = before;
  for (let i = 0; i < 100 && seen === before; i += 1) {
    seen = Number(textOf(await client.callTool({ name: "cancelled_naps", arguments: {} })));
    if (seen === before) await sleep(100);
  }
  check("the cancellation reached the tool", seen === before + 1, { before, seen });

  // A tool that computes without yielding does not stop a ping.
  let busyDone = false;
  const busy = client.callTool({ name: "busy", arguments: { millis: 3000 } }).finally(() => {
    busyDone = true;
  });
  await sleep(300);
  await client.ping();
  check("a ping is answered while a tool computes", !busyDone, "the busy call had already finished");
  check("the busy call still finishes", textOf(await busy).startsWith("computed for 3000 ms"), "");
} finally {
  await stop();
}
console.log(failures ? `${failures} check(s) failed` : "every check passed");
process.exit(failures ? 1 : 0);

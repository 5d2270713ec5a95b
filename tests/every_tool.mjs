// The steps of tests/every_tool.py with the official TypeScript SDK client (the one the MCP
// Inspector is built on, from .e2e/node_modules): each tool called once to succeed (the SDK
// validates structuredContent against the tool's output schema) and once to fail (the error
// result must pass the same client). Reads its plan as a JSON line on stdin, says "ready" once
// both servers answer, starts on the next line, and prints what went wrong.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const plan = JSON.parse((await lines.next()).value);

function resolve(value, results) {
  if (Array.isArray(value)) return value.map((v) => resolve(v, results));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, results)]));
  }
  if (typeof value === "string" && value.startsWith("$")) {
    const [label, ...path] = value.slice(1).split(".");
    return path.reduce((found, part) => found[/^\d+$/.test(part) ? Number(part) : part],
                       results[label]);
  }
  return typeof value === "string" ? value.replaceAll("{work}", plan.work) : value;
}

async function connect(server) {
  const client = new Client({ name: "nexus-every-tool", version: "1" },
                            { versionNegotiation: { mode: plan.mode } });
  await client.connect(new StdioClientTransport({ ...server, stderr: "inherit" }));
  await client.listTools();  // the output schemas the client validates against
  return client;
}

const a = await connect(plan.servers.A);
const b = await connect(plan.servers.B);
process.stdout.write(JSON.stringify({ ready: true }) + "\n");
await lines.next();
const results = {};
const problems = [];
for (const [label, tool, args] of plan.steps) {
  const asB = plan.as_b.includes(tool);
  const on = asB ? b : a;
  const meta = asB ? { _meta: plan.b_meta } : {};
  try {
    const ok = await on.callTool({ name: tool, arguments: resolve(args, results), ...meta });
    if (ok.isError) {
      problems.push(`${tool}: ${ok.content?.[0]?.text}`);
      continue;
    }
    results[label] = ok.structuredContent;
    const bad = await on.callTool({ name: tool, arguments: plan.failing, ...meta });
    const code = bad._meta?.["nexus/error"]?.code;
    if (!bad.isError || bad.structuredContent !== undefined || code !== "invalid_argument") {
      problems.push(`${tool}: the error path gave ${JSON.stringify(bad)}`);
    }
  } catch (error) {
    problems.push(`${tool}: the client refused the result: ${error.message}`);
  }
}
const version = a.getNegotiatedProtocolVersion();
await a.close();
await b.close();
process.stdout.write(JSON.stringify({ problems, called: Object.keys(results),
                                      version }) + "\n");

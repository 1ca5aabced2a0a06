// A coding agent with the Vercel AI SDK whose tools are the agent's
// filesystem and in-process sandbox (agentfs-sdk/ai). The model here is
// scripted (MockLanguageModelV3 from ai/test): it emits the tool calls a
// real model would, reading each tool result before the next step, so the
// AI SDK's loop, the tools and the database run for real with no network.
// Swap `scriptedModel()` for `openai("gpt-5")` (or any provider) to drive
// it with a real model.
//
//   node agent.mjs [DB]     (default .agentfs/coder.db)

import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { AgentFS } from "agentfs-sdk";
import { aiSdkTools } from "agentfs-sdk/ai";

const db = process.argv[2] ?? ".agentfs/coder.db";

// The project the agent works on: a greeting script and its test, with a bug.
const project = {
  "/project/greet.sh": '#!/bin/sh\n# Prints a greeting for $1.\necho "Hello, $1"\n',
  "/project/test.sh": '#!/bin/sh\nout=$(sh greet.sh world)\nif [ "$out" = "Hello, world!" ]; then echo PASS; else echo "FAIL: got \'$out\'"; exit 1; fi\n',
};

/** The last tool result in the prompt, as the model would read it. */
function lastToolResult(prompt) {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const m = prompt[i];
    if (m.role !== "tool") continue;
    const part = m.content.at(-1);
    return part.output.type === "json" ? part.output.value : part.output.value;
  }
  return undefined;
}

/**
 * A scripted model: each step looks at what came back and decides the next
 * tool call, as a model would (it only fixes the script after seeing the
 * test fail, and only finishes once the test passes).
 */
function scriptedModel() {
  let step = 0;
  const call = (toolName, input) => ({
    content: [{ type: "tool-call", toolCallId: `call-${step}`, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage: { inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 20, text: 20, reasoning: 0 } },
    warnings: [],
  });
  const text = (t) => ({
    content: [{ type: "text", text: t }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: { inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 20, text: 20, reasoning: 0 } },
    warnings: [],
  });
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      step++;
      const seen = lastToolResult(prompt);
      switch (step) {
        case 1:
          return call("list", { path: "/project" });
        case 2:
          return call("bash", { command: "sh test.sh", cwd: "/project" });
        case 3:
          if (seen.exit_code === 0) return text("The test already passes; nothing to fix.");
          return call("read_file", { path: "/project/greet.sh" });
        case 4:
          return call("edit_file", { path: "/project/greet.sh", old_string: 'echo "Hello, $1"', new_string: 'echo "Hello, $1!"' });
        case 5:
          return call("bash", { command: "sh test.sh", cwd: "/project" });
        case 6:
          if (seen.exit_code !== 0) return text(`The fix did not work: ${seen.stdout}`);
          return call("write_file", { path: "/project/CHANGES.md", content: "- greet.sh: end the greeting with '!' (test.sh passes)\n" });
        default:
          return text("Fixed greet.sh: the greeting now ends with '!', and test.sh passes.");
      }
    },
  });
}

const agent = await AgentFS.open({ path: db });
try {
  for (const [path, content] of Object.entries(project)) await agent.fs.writeFile(path, content);

  const result = await generateText({
    model: scriptedModel(),
    tools: aiSdkTools(agent),
    stopWhen: stepCountIs(10),
    system: "You are a coding agent. Use the tools to inspect, test and fix the project in /project.",
    prompt: "The test in /project fails. Fix it.",
  });

  console.log(`steps: ${result.steps.length}`);
  console.log(`answer: ${result.text}`);
  console.log("\ntimeline (the agent's tool-call log, oldest first):");
  const calls = (await agent.tools.getRecent(0)).reverse();
  for (const c of calls) {
    console.log(`  #${c.id} ${c.name.padEnd(10)} ${c.status.padEnd(7)} ${JSON.stringify(c.parameters)}`);
  }
  console.log("\n/project/greet.sh now:\n" + (await agent.fs.readFile("/project/greet.sh", "utf8")));
} finally {
  await agent.close();
}

// An Arena bot in JavaScript over the stdio bridge: one JSON message per line.
// It plays uniformly at random among the legal actions, for any game.
"use strict";
const readline = require("readline");

// A small seeded generator (mulberry32), so a run can be reproduced.
let state = 0x9e3779b9 ^ Number(process.env.ARENA_BOT_SEED || 1);
function random() {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

send({ type: "hello", protocol: 1, token: process.env.ARENA_TOKEN, name: "js-random" });

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "act") {
    const legal = message.legal;
    send({ type: "action", seq: message.seq, action: legal[Math.floor(random() * legal.length)] });
  } else if (message.type === "error") {
    process.stderr.write(`referee: ${message.code}: ${message.message}\n`);
  } else if (message.type === "bye") {
    process.exit(0);
  }
});

// A stand-and-deliver bot in JavaScript over stdin/stdout (docs/protocol.md 9.3):
// rob a random coach, share in encounters, heal when hurt, sit out at 1 health.
const readline = require("readline");
function send(m) { process.stdout.write(JSON.stringify(m) + "\n"); }
function has(legal, a) { return legal.find((x) => JSON.stringify(x) === JSON.stringify(a)); }
function choose(obs, legal) {
  if (legal.length === 1) return legal[0];
  const d = obs.decision || {};
  const me = obs.highwaymen[obs.seat];
  switch (d.id) {
    case "D1": return has(legal, "surgeon") && me.health <= 2 ? "surgeon" : "none";
    case "D2": {
      if (me.health <= 1 || obs.round === obs.rounds) return "HORSE";
      const coaches = legal.filter((a) => typeof a === "object" && "coach" in a);
      return coaches.length ? coaches[Math.floor(Math.random() * coaches.length)] : legal[0];
    }
    case "D3": case "D3t": return "SHARE";
    case "D4": return has(legal, "inside_man") ? "inside_man" : "none";
    case "D5": return has(legal, "bribe_judge") ? "bribe_judge" : "none";
    case "D6": return has(legal, { lucky_charm: "redcoat" }) || has(legal, { lucky_charm: "shot" }) || "none";
    default: return legal[0];
  }
}
let welcomed = false;
send({ type: "hello", protocol: 1, token: process.env.ARENA_TOKEN, name: "js-stand-and-deliver" });
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.type === "welcome") welcomed = true;
  else if (m.type === "act") send({ type: "action", seq: m.seq, action: choose(m.observation, m.legal) });
  else if (m.type === "error") {
    process.stderr.write(`referee: ${m.code}: ${m.message}\n`);
    if (!welcomed) process.exit(1);
  } else if (m.type === "bye") process.exit(0);
});

// aoi view: the DOM helpers and one episode's story (verdicts, every step, approvals, config). Shared by the served
// viewer (app.js) and the report's static pages, which embed their data in <script id="aoi-data">.
"use strict";
const AOI = {};

// h("td", {class: "num"}, "3") builds an element; children are nodes or text (never parsed as HTML).
AOI.h = function (tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v); else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  return el;
};
const h = AOI.h;

AOI.yn = (v) => v === null || v === undefined ? h("span", {class: "na"}, "-")
  : h("span", {class: v ? "yes" : "no"}, v ? "yes" : "no");
AOI.num = (v, digits) => v === null || v === undefined ? "-"
  : typeof v === "number" ? (digits === undefined ? v.toLocaleString("en") : v.toFixed(digits)) : String(v);
AOI.pct = (v) => v === null || v === undefined ? "-" : (100 * v).toFixed(1) + "%";
AOI.table = function (head, rows, attrs) {
  return h("table", attrs || {}, h("thead", {}, h("tr", {}, head.map((c) => h("th", {}, c)))),
    h("tbody", {}, rows));
};

const FOLD_CHARS = 1200, FOLD_LINES = 16;  // an observation longer than this is folded, whole inside

AOI.observation = function (text) {
  if (!text) return null;
  const lines = text.split("\n").length;
  if (text.length <= FOLD_CHARS && lines <= FOLD_LINES) return h("pre", {class: "obs"}, text);
  const first = text.split("\n", 1)[0].slice(0, 100);
  return h("details", {class: "obs folded"},
    h("summary", {}, `observation: ${lines} lines, ${text.length.toLocaleString("en")} chars — ${first}`),
    h("pre", {}, text));
};

function field(key, value) {
  if (value === null || value === undefined || value === "" || (Array.isArray(value) && !value.length)) return null;
  const shown = typeof value === "string" ? value : JSON.stringify(value, null, 1);
  return h("div", {class: "field"}, h("span", {class: "k"}, key), " ", shown.includes("\n") ? h("pre", {}, shown)
    : h("span", {}, shown));
}

function stepBody(step) {
  const reply = step.reply;
  const parts = [];
  if (step.role === "observer" && reply) {
    parts.push(field("phase", reply.phase), field("next", reply.next), field("instruction", reply.instruction),
      field("hypotheses", (reply.hypotheses || []).map((x) => `${x.claim} (${x.confidence}): ${x.evidence || ""}`)
        .join("\n")), field("answer", reply.answer), field("plan", (reply.plan || []).join(" → ")));
  } else if (reply && reply.tool) {
    parts.push(field("thought", reply.thought), field("tool", reply.tool),
      reply.args && reply.args.command ? h("pre", {class: "command"}, "$ " + reply.args.command)
        : field("args", reply.args));
  } else if (step.role === "compressor") {
    parts.push(h("div", {class: "field"}, h("span", {class: "k"}, "summary")), h("pre", {class: "summary"}, step.text));
  } else if (step.text) {
    parts.push(field("reply", step.text));
  }
  if (step.action && !(reply && reply.tool)) parts.push(h("pre", {class: "command"}, step.action.replace(/```/g, "").trim()));
  parts.push(AOI.observation(step.observation));
  return parts;
}

AOI.step = function (step, n) {
  const status = String(step.status || "ok");
  return h("section", {class: `step ${step.role} status-${status}`, "data-role": step.role, "data-status": status},
    h("div", {class: "step-head"}, h("b", {}, `#${n} ${step.role}`),
      status === "ok" ? null : h("span", {class: "badge warn"}, status),
      h("span", {}, `t=${AOI.num(step.t, 2)} s`), h("span", {}, `latency ${AOI.num(step.latency, 3)} s`),
      h("span", {}, `tokens ${step.input_tokens} in / ${step.output_tokens} out`)),
    stepBody(step));
};

function verdictBox(title, ok, rows) {
  return h("div", {class: "verdict", "data-verdict": title}, h("b", {}, title + ": "), AOI.yn(ok),
    rows.filter((r) => r).map(([k, v]) => field(k, v)));
}

AOI.verdicts = function (v) {
  const results = Object.entries(v.results || {}).filter(([k]) => k !== "strict_success")
    .map(([k, x]) => `${k}: ${typeof x === "object" ? JSON.stringify(x) : x}`).join("\n");
  return h("div", {class: "verdicts"},
    verdictBox("AIOpsLab", v.aiopslab, [["results", results], ["failure", v.failure], ["error", v.error],
      v.forced_submit ? ["forced", "the limits forced this submit"] : null]),
    verdictBox("strict", v.strict, [["rule", v.strict_rule], ["submitted", v.submission],
      ["expected", v.expected]]));
};

AOI.approvals = function (audit) {
  if (!audit || !audit.length) return null;
  const rows = audit.map((a) => h("tr", {class: "audit"}, h("td", {class: "mono"}, a.command),
    h("td", {}, AOI.yn(a.verdict && a.verdict.allowed), " ", (a.verdict || {}).reason || ""),
    h("td", {}, (a.approval || {}).status || "-", " ", (a.approval || {}).reason || ""),
    h("td", {class: "mono"}, (a.outcome || "").slice(0, 200))));
  return [h("h2", {}, "Approvals and refusals"), AOI.table(["command", "policy", "approval", "outcome"], rows)];
};

function models(config) {
  const roles = Object.entries((config || {}).models || {}).map(([role, m]) => [role, (m || {}).spec]);
  if (roles.length && roles.every(([, spec]) => spec === roles[0][1])) return `${roles[0][1]} (every role)`;
  return roles.length ? roles.map(([role, spec]) => `${role}: ${spec}`).join(", ")
    : ((config || {}).model || {}).spec || "-";
}

AOI.episode = function (ep, opts) {
  opts = opts || {};
  const took = (ep.ended_at || 0) - (ep.started_at || 0);
  const started = new Date((ep.started_at || 0) * 1000).toISOString().slice(0, 19).replace("T", " ");
  const calls = ep.steps.filter((s) => s.role !== "observer" || s.text).length;
  const head = [["trajectory", h("span", {class: "mono"}, ep.id)], ["run", ep.run || "-"],
    ["problem", `${ep.problem_id} (${ep.task_type}, family ${ep.family || "-"}, target ${ep.target || "-"})`],
    ["episode", `${ep.backend}, seed ${ep.seed}, attempt ${ep.attempt}, started ${started} UTC, ${took.toFixed(1)} s`],
    ["model(s)", models(ep.config)], ["env version", ep.env_version || "-"],
    ["model tokens", `${ep.tokens.input.toLocaleString("en")} in, ${ep.tokens.output.toLocaleString("en")} out ` +
      `over ${calls} model calls; ${(ep.row || {}).steps ?? "-"} environment steps`]];
  return h("div", {class: "episode", "data-trajectory": ep.id},
    opts.title === false ? null : h("h1", {}, ep.problem_id),
    AOI.table(["", ""], head.map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, v))), {class: "head"}),
    AOI.verdicts(ep.verdicts), h("h2", {}, `Steps (${ep.steps.length})`),
    ep.steps.map((s, i) => AOI.step(s, i + 1)), AOI.approvals(ep.audit),
    h("details", {class: "config"}, h("summary", {}, "resolved config"), h("pre", {}, JSON.stringify(ep.config, null, 2))));
};

// A static page of the report: one episode, or one problem's episodes per run side by side.
AOI.staticPage = function (data) {
  const main = document.getElementById("app");
  main.replaceChildren();
  if (data.page === "episode") { main.append(AOI.episode(data.episode)); return; }
  main.append(h("h1", {}, data.problem_id));
  main.append(h("div", {class: "side"}, data.runs.map((run) => h("div", {class: "column"},
    h("h2", {}, run.label), h("p", {}, "attempts: ", run.attempts.map((a) => [h("a", {href: a.href},
      `#${a.attempt}`), " ", AOI.yn(a.success), " "])),
    run.episodes.length ? AOI.episode(run.episodes[0], {title: false}) : h("p", {class: "na"}, "not stored")))));
};

// aoi view: the served viewer. Routes live in the URL's hash (#/run/KEY?outcome=failed, #/run/KEY/t/ID,
// #/compare/A/B, #/compare/A/B/p/PROBLEM), so every view has a link; the page polls the run's stamp to follow a
// run in progress. Static report pages embed their data and only call AOI.staticPage.
"use strict";
const app = document.getElementById("app");
let poll = null;

async function api(route, params) {
  const response = await fetch(`api/${route}?` + new URLSearchParams(params || {}), {cache: "no-store"});
  if (!response.ok) throw new Error(await response.text());
  return response.json();
}

function route() {
  const [path, search] = location.hash.slice(1).split("?");
  const parts = (path || "/").split("/").filter(Boolean).map(decodeURIComponent);
  return {parts, query: Object.fromEntries(new URLSearchParams(search || ""))};
}

function go(parts, query) {
  const q = new URLSearchParams(Object.entries(query || {}).filter(([, v]) => v)).toString();
  location.hash = "#/" + parts.map(encodeURIComponent).join("/") + (q ? "?" + q : "");
}

const link = (parts, text, query) => h("a", {href: "#/" + parts.map(encodeURIComponent).join("/") +
  (query ? "?" + new URLSearchParams(query) : "")}, text);

function crumbs(...items) {
  document.getElementById("crumbs").replaceChildren(...items.flatMap((c) => [" / ", c]));
}

// Follow a run in progress: re-render when its stamp (results, summary, metrics, store sizes and times) moves.
function follow(key, stamp) {
  poll = setInterval(async () => {
    const now = await api("stamp", {key}).catch(() => null);
    if (now && now.stamp !== stamp) { stamp = now.stamp; render(); }
  }, 2000);
}

async function render() {
  clearInterval(poll);
  const {parts, query} = route();
  try {
    if (parts[0] === "run" && parts[2] === "t") return await showEpisode(parts[1], parts[3]);
    if (parts[0] === "run") return await showRun(parts[1], query);
    if (parts[0] === "compare" && parts[3] === "p") return await showSide(parts[1], parts[2], parts[4], query);
    if (parts[0] === "compare") return await showCompare(parts[1], parts[2], query);
    return await showRuns();
  } catch (err) {
    app.replaceChildren(h("p", {class: "error"}, String(err.message || err)));
  }
}

async function showRuns() {
  const data = await api("runs");
  crumbs();
  const rows = data.runs.map((r) => h("tr", {class: "run", "data-key": r.key}, h("td", {}, link(["run", r.key], r.key)),
    h("td", {}, r.kind), h("td", {}, r.model || "-"), h("td", {class: "num"}, r.episodes),
    h("td", {}, r.in_progress ? h("span", {class: "badge running"}, "in progress") : "")));
  const evals = data.runs.filter((r) => r.kind !== "training").map((r) => r.key);
  const pick = (id, i) => h("select", {id}, evals.map((k, j) => h("option", {value: k, selected: j === i}, k)));
  app.replaceChildren(h("h1", {}, `Runs (${data.runs.length})`), h("p", {class: "na"}, "under " + data.roots.join(", ")),
    AOI.table(["run", "kind", "model", "episodes", ""], rows, {id: "runs"}),
    evals.length > 1 ? h("div", {class: "controls"}, "compare", pick("cmp-a", 0), "with", pick("cmp-b", 1),
      h("button", {id: "cmp-go", onclick: () => go(["compare", document.getElementById("cmp-a").value,
        document.getElementById("cmp-b").value])}, "compare")) : null);
  poll = setInterval(async () => {
    const now = await api("runs").catch(() => null);
    if (now && JSON.stringify(now.runs.map((r) => [r.key, r.stamp])) !==
        JSON.stringify(data.runs.map((r) => [r.key, r.stamp]))) render();
  }, 3000);  // the list is read again (a folder walk) so runs that appear or grow show up
}

const OUTCOMES = {all: () => true, failed: (r) => !r.success, succeeded: (r) => r.success,
  "strict failed": (r) => !r.strict_success};
const COLUMNS = [["problem_id", "problem"], ["target", "target"], ["attempt", "attempt"], ["task_type", "task type"],
  ["success", "AIOpsLab"], ["strict_success", "strict"], ["steps", "env steps"], ["model_steps", "model calls"],
  ["model_in_tokens", "model tokens in"], ["model_out_tokens", "out"], ["seconds", "seconds"],
  ["failure", "failure"]];

function summaryTable(summary, rows) {
  const groups = summary && summary.by_task_type ? {...summary.by_task_type, overall: summary.overall} : null;
  if (!groups) {  // no summary.json yet: count the rows
    const types = {};
    for (const r of rows) (types[r.task_type] = types[r.task_type] || []).push(r);
    return AOI.table(["task type", "episodes", "AIOpsLab", "strict"], Object.entries(types).map(([t, rs]) =>
      h("tr", {}, h("td", {}, t), h("td", {class: "num"}, rs.length),
        h("td", {class: "num"}, AOI.pct(rs.filter((r) => r.success).length / rs.length)),
        h("td", {class: "num"}, AOI.pct(rs.filter((r) => r.strict_success).length / rs.length)))), {id: "summary"});
  }
  return AOI.table(["task type", "problems", "episodes", "avg@k", "best@k", "strict avg@k", "TTx (s)", "env steps"],
    Object.entries(groups).map(([t, g]) => h("tr", {class: "type", "data-type": t}, h("td", {}, t),
      h("td", {class: "num"}, g.problems), h("td", {class: "num"}, g.episodes), h("td", {class: "num"}, AOI.pct(g.avg_at_k)),
      h("td", {class: "num"}, AOI.pct(g.best_at_k)), h("td", {class: "num"}, AOI.pct(g.strict_avg_at_k)),
      h("td", {class: "num"}, AOI.num(g.ttx, 1)), h("td", {class: "num"}, AOI.num(g.steps, 1)))), {id: "summary"});
}

async function showRun(key, query) {
  const run = await api("run", {key});
  crumbs(link(["run", key], key));
  if (run.kind === "training") return showTraining(run);
  const types = [...new Set(run.rows.map((r) => r.task_type))].sort();
  const outcome = OUTCOMES[query.outcome] ? query.outcome : "all";
  const text = (query.q || "").toLowerCase();
  let rows = run.rows.filter(OUTCOMES[outcome]).filter((r) => !query.type || r.task_type === query.type)
    .filter((r) => !text || `${r.problem_id} ${r.target || ""} ${r.failure || ""}`.toLowerCase().includes(text));
  const sort = query.sort || "problem_id", dir = query.dir === "desc" ? -1 : 1;
  rows = rows.slice().sort((a, b) => (a[sort] ?? "") > (b[sort] ?? "") ? dir : (a[sort] ?? "") < (b[sort] ?? "") ? -dir : 0);
  const set = (change) => go(["run", key], {...query, ...change});
  const select = (id, value, options, name) => h("select", {id, onchange: (e) => set({[name]: e.target.value})},
    options.map(([v, label]) => h("option", {value: v, selected: v === value}, label)));
  const head = h("tr", {}, COLUMNS.map(([col, label]) => h("th", {class: "sortable" + (col === sort ? " sorted" +
    (dir > 0 ? " asc" : "") : ""), "data-col": col, onclick: () => set({sort: col,
    dir: col === sort && dir > 0 ? "desc" : "asc"})}, label)), h("th", {}, "trajectory"));
  const body = rows.map((r) => h("tr", {class: "episode-row", "data-success": String(!!r.success)},
    COLUMNS.map(([col]) => col === "success" || col === "strict_success" ? h("td", {}, AOI.yn(r[col]))
      : h("td", {class: typeof r[col] === "number" ? "num" : "nowrap"}, AOI.num(r[col], col === "seconds" ? 1 : undefined))),
    h("td", {class: "id"}, r.trajectory_id ? link(["run", key, "t", r.trajectory_id], r.trajectory_id.slice(0, 12)) : "-")));
  app.replaceChildren(h("h1", {}, key, " ", run.in_progress ? h("span", {class: "badge running"}, "in progress") : ""),
    h("p", {class: "na"}, `${run.kind} run, model ${run.model || "-"}, ${run.rows.length} episodes, ${run.path}`),
    h("h2", {}, "Results by task type"), summaryTable(run.summary, run.rows),
    h("h2", {}, "Episodes"), h("div", {class: "controls"},
      h("label", {}, "outcome ", select("outcome", outcome, Object.keys(OUTCOMES).map((o) => [o, o]), "outcome")),
      h("label", {}, "task type ", select("type", query.type || "", [["", "all"], ...types.map((t) => [t, t])], "type")),
      h("label", {}, "problem ", h("input", {id: "q", value: query.q || "", placeholder: "filter",
        onchange: (e) => set({q: e.target.value})})),
      h("span", {id: "shown"}, `${rows.length} of ${run.rows.length} shown`)),
    h("table", {id: "episodes"}, h("thead", {}, head), h("tbody", {}, body)));
  follow(key, run.stamp);
}

async function showEpisode(key, id) {
  const ep = await api("episode", {key, id});
  crumbs(link(["run", key], key), h("span", {class: "mono"}, id.slice(0, 12)));
  app.replaceChildren(AOI.episode(ep));
}

async function showCompare(a, b, query) {
  const cmp = await api("compare", {a, b});
  crumbs(link(["run", a], a), "vs", link(["run", b], b));
  const shown = cmp.problems.filter((p) => !query.flipped || p.flip || p.strict_flip);
  const score = (o) => `${o.successes}/${o.attempts} (strict ${o.strict})`;
  const rows = shown.map((p) => h("tr", {class: "problem", "data-flip": p.flip || ""}, h("td", {}, p.problem_id),
    h("td", {}, p.task_type), h("td", {class: "num"}, score(p.a)), h("td", {class: "num"}, score(p.b)),
    h("td", {}, p.flip ? h("span", {class: "badge " + p.flip}, p.flip) : ""),
    h("td", {}, p.strict_flip ? h("span", {class: "badge " + p.strict_flip}, p.strict_flip) : ""),
    h("td", {}, link(["compare", a, b, "p", p.problem_id], "side by side"))));
  app.replaceChildren(h("h1", {}, `${a} vs ${b}`),
    h("p", {id: "flipped"}, `${cmp.flipped} of ${cmp.problems.length} common problems flipped`,
      cmp.only_a.length || cmp.only_b.length ? `; only in ${a}: ${cmp.only_a.length}, only in ${b}: ${cmp.only_b.length}` : ""),
    h("div", {class: "controls"}, h("label", {}, h("input", {type: "checkbox", id: "only-flipped",
      checked: !!query.flipped, onchange: (e) => go(["compare", a, b], {flipped: e.target.checked ? "1" : ""})}),
      " flipped only")),
    AOI.table(["problem", "task type", a, b, "flip", "strict flip", ""], rows, {id: "compare"}));
}

async function showSide(a, b, problem, query) {
  const cmp = await api("compare", {a, b});
  const p = cmp.problems.find((x) => x.problem_id === problem);
  if (!p) throw new Error(`${problem} is not a problem both ${a} and ${b} ran`);
  const attempt = Number(query.attempt || 0);
  const eps = await Promise.all([[a, p.a], [b, p.b]].map(([key, o]) =>
    o.trajectories[attempt] ? api("episode", {key, id: o.trajectories[attempt]}) : null));
  crumbs(link(["compare", a, b], `${a} vs ${b}`), problem);
  app.replaceChildren(h("h1", {}, problem, p.flip ? [" ", h("span", {class: "badge " + p.flip}, p.flip)] : ""),
    h("div", {class: "side"}, eps.map((ep, i) => h("div", {class: "column"}, h("h2", {}, [a, b][i]),
      ep ? AOI.episode(ep, {title: false}) : h("p", {class: "na"}, `no attempt ${attempt}`)))));
}

function chart(series, xLabel) {
  const W = 640, H = 260, L = 48, B = 28;
  const pts = series.flatMap((s) => s.points);
  if (!pts.length) return h("p", {class: "na"}, "no steps logged yet");
  const [x0, x1] = [Math.min(...pts.map((p) => p[0])), Math.max(...pts.map((p) => p[0]))];
  const [y0, y1] = [Math.min(...pts.map((p) => p[1])), Math.max(...pts.map((p) => p[1]))];
  const X = (x) => L + (W - L - 8) * (x1 === x0 ? 0.5 : (x - x0) / (x1 - x0));
  const Y = (y) => H - B - (H - B - 8) * (y1 === y0 ? 0.5 : (y - y0) / (y1 - y0));
  const NS = "http://www.w3.org/2000/svg", svg = document.createElementNS(NS, "svg");
  svg.setAttribute("class", "chart"); svg.setAttribute("width", W); svg.setAttribute("height", H);
  const add = (tag, attrs, text) => { const el = document.createElementNS(NS, tag);
    Object.entries(attrs).forEach(([k, v]) => el.setAttribute(k, v)); if (text) el.textContent = text; svg.append(el); };
  const colors = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#9a6700", "#bf3989"];
  add("text", {x: 4, y: 14, "font-size": 11}, y1.toFixed(3)); add("text", {x: 4, y: H - B, "font-size": 11}, y0.toFixed(3));
  add("text", {x: L, y: H - 8, "font-size": 11}, `${xLabel} ${x0}`); add("text", {x: W - 60, y: H - 8, "font-size": 11}, String(x1));
  series.forEach((s, i) => add("polyline", {fill: "none", stroke: colors[i % colors.length], "stroke-width": 2,
    "data-series": s.name, points: s.points.map(([x, y]) => `${X(x)},${Y(y)}`).join(" ")}));
  return h("div", {}, svg, h("div", {class: "legend"}, series.map((s, i) =>
    h("span", {style: `color:${colors[i % colors.length]}`}, "— " + s.name))));
}

async function showTraining(run) {
  const data = await api("training", {key: run.key});
  const terms = [...new Set(data.steps.flatMap((s) => Object.keys(s).filter((k) => /^rewards\/.*\/mean$/.test(k))))];
  const series = [{name: "reward", points: data.steps.map((s) => [s.step, s.reward])},
    ...terms.map((t) => ({name: t.split("/")[1], points: data.steps.filter((s) => typeof s[t] === "number")
      .map((s) => [s.step, s[t]])}))];
  const m = data.manifest || {};
  app.replaceChildren(h("h1", {}, run.key), h("p", {class: "na"}, `training run (${m.engine || "trl"}), base ` +
    `${m.base || "-"}, role ${m.role || "-"}, ${data.steps.length} steps logged`),
    h("h2", {}, "Reward by step"), h("div", {id: "reward-chart"}, chart(series, "step")),
    h("details", {}, h("summary", {}, "manifest"), h("pre", {}, JSON.stringify(m, null, 2))));
  follow(run.key, run.stamp);
}

const embedded = document.getElementById("aoi-data");
if (embedded) AOI.staticPage(JSON.parse(embedded.textContent));
else { window.addEventListener("hashchange", render); render(); }

// The page's behaviour: the deadline slider re-picks every (model, GPU) from the stable
// configurations embedded in the page, the filters hide rows and marks, and the charts follow.
// The rule is pipeline/selection.py's: the configurations arrive in its total selection order
// (energy per token, then median ITL, GPU count, max_num_seqs, then every other column), so a
// group's pick at a deadline is its first configuration whose median ITL is within it.
"use strict";

const data = JSON.parse(document.getElementById("page-data").textContent);
const specs = JSON.parse(document.getElementById("chart-specs").textContent);
const configurations = data.configurations;
const groups = data.groups;
const count = configurations.group.length;

/** Per group, the index of its pick among the configurations at `deadline` on the ITL
 * `statistic` (median, p90, p95, p99: profiles.json's rule), or -1. A configuration without a
 * value for the statistic is not eligible (null <= x is true in JavaScript: tested apart). */
function picksAt(deadline, statistic = "median") {
  const itl = statistic === "median" ? configurations.itl : configurations.tails[statistic];
  const picks = new Array(groups.length).fill(-1);
  let left = groups.length;
  for (let i = 0; i < count && left > 0; i++) {
    const group = configurations.group[i];
    if (picks[group] < 0 && itl[i] !== null && itl[i] <= deadline) {
      picks[group] = i;
      left--;
    }
  }
  return picks;
}

function formatted(field, value) {
  const digits = data.formats[field];
  return digits === undefined || digits === null ? String(value) : value.toFixed(digits);
}

function rowId(group, i) {
  const g = groups[group];
  const c = configurations;
  return `${g.slug}/${g.gpu}/${c.num_gpus[i]}/${c.max_num_seqs[i]}`;
}

const indexPicks = picksAt(data.deadline, data.statistic);
const slider = document.getElementById("deadline");
const shown = document.getElementById("deadline-value");
const modelFilter = document.getElementById("model-filter");
const gpuBoxes = Array.from(document.querySelectorAll("input[name=gpu]"));
const summary = document.getElementById("changed-count");
const rows = Array.from(document.querySelectorAll("#index-table tbody tr"));
// A number column's field, named once in its heading; undefined for the others.
const tableFields = Array.from(
  document.querySelectorAll("#index-table thead th"), (th) => th.dataset.field);
const views = {};
const statistic = document.getElementById("statistic");
const state = { deadline: data.deadline, statistic: data.statistic, picks: indexPicks };

function visible(group) {
  const g = groups[group];
  const gpus = new Set(gpuBoxes.filter((box) => box.checked).map((box) => box.value));
  return gpus.has(g.gpu) && (modelFilter.value === "" || modelFilter.value === g.model_id);
}

function updateTable() {
  for (const tr of rows) {
    const group = Number(tr.dataset.group);
    const pick = state.picks[group];
    const changed = pick !== indexPicks[group];
    tr.hidden = !visible(group);
    tr.classList.toggle("changed", changed);
    tr.classList.toggle("none", pick < 0);
    tr.dataset.rowId = pick < 0 ? "" : rowId(group, pick);
    for (const [column, field] of tableFields.entries()) {
      if (field === undefined) continue;
      const td = tr.cells[column];
      if (field === "deciding_itl") {  // the tail statistic that decides, beside the median
        td.hidden = state.statistic === "median";
        td.textContent = pick < 0 || td.hidden
          ? "—" : formatted(field, configurations.tails[state.statistic][pick]);
        continue;
      }
      td.textContent = pick < 0 ? "—" : formatted(field, configurations[field][pick]);
    }
    const status = tr.lastElementChild; // the pick's status, after the figures
    status.textContent = pick < 0 ? "none within the deadline" : changed ? "changed" : "";
  }
  const deciding = document.getElementById("deciding-itl");
  if (deciding) {
    deciding.hidden = state.statistic === "median";
    deciding.textContent = `${state.statistic} ITL ms`;
  }
  const changed = state.picks.filter((pick, group) => pick !== indexPicks[group]).length;
  summary.textContent =
    `At ${formatted("deadline", state.deadline)} ms, ${changed} of ${groups.length} picks ` +
    `differ from the index's (${formatted("deadline", data.deadline)} ms).`;
}

function pickValues() {
  const values = [];
  state.picks.forEach((pick, group) => {
    if (pick >= 0 && visible(group)) values.push(pointOf(pick, pick !== indexPicks[group]));
  });
  return values;
}

function pointOf(i, changed) {
  const g = groups[configurations.group[i]];
  const c = configurations;
  return {
    model: g.model, model_id: g.model_id, gpu: g.gpu, precision: g.precision,
    curve: `${g.gpu} × ${c.num_gpus[i]}`, num_gpus: c.num_gpus[i],
    max_num_seqs: c.max_num_seqs[i], itl: c.itl[i], median_itl_ms: c.median_itl_ms[i],
    wh: c.wh_per_million_output_tokens[i], joules: c.joules_per_output_token[i],
    power: c.gpu_power_watts_total[i], in_flight: c.avg_requests_in_flight[i],
    changed: changed, picked: state.picks[c.group[i]] === i,
  };
}

function pointValues() {
  const values = [];
  for (let i = 0; i < count; i++) {
    if (visible(configurations.group[i])) values.push(pointOf(i, false));
  }
  return values;
}

/** What the filters show, as one string: the curves are drawn anew when it changes. */
function filterKey() {
  return `${gpuBoxes.filter((box) => box.checked).map((box) => box.value)}|${modelFilter.value}`;
}

const embedOptions = { actions: false, renderer: "svg" };
let curvesKey = null;

async function drawCurves() {
  // A facet whose model a filter removes would be run once more with no data before it goes,
  // and Vega warns of its empty extents; drawn anew, the chart has only the facets it shows.
  if (views.curves) views.curves.finalize();
  curvesKey = filterKey();
  const spec = { ...specs.curves, datasets: { points: pointValues() } };
  spec.params = spec.params.map((p) => (p.name === "deadline" ? { ...p, value: state.deadline } : p));
  views.curves = (await vegaEmbed("#curves-chart", spec, embedOptions)).view;
}

// One redraw at a time: a redraw that embeds the curves anew must end before the next one
// touches their view.
let drawing = Promise.resolve();
function updateCharts() {
  drawing = drawing.then(redraw);
  return drawing;
}

function redraw() {
  const runs = [];
  if (views.wh) {
    const picks = pickValues();
    // The bar scale's end is a parameter, not the data's extent, which would be empty (and
    // warned about) where no pick is left; then the scale stays as it was.
    if (picks.length > 0) views.wh.signal("wh_max", Math.max(...picks.map((p) => p.wh)));
    runs.push(views.wh.data("picks", picks).runAsync());
  }
  if (views.curves && curvesKey !== filterKey()) {
    runs.push(drawCurves());
  } else if (views.curves) {
    views.curves.signal("deadline", state.deadline);
    runs.push(views.curves.data("points", pointValues()).runAsync());
  }
  return Promise.all(runs);
}

let pending = null;
function update() {
  state.deadline = Number(slider.value);
  state.statistic = statistic ? statistic.value : data.statistic;
  state.picks = picksAt(state.deadline, state.statistic);
  shown.textContent = `${formatted("deadline", state.deadline)} ms`;
  updateTable();
  // A drag fires many input events; the charts redraw once per frame at most.
  if (pending === null) {
    pending = requestAnimationFrame(() => {
      pending = null;
      const deadline = state.deadline;
      const drawnStatistic = state.statistic;
      updateCharts().then(() => {
        document.documentElement.dataset.statistic = drawnStatistic;
        document.documentElement.dataset.drawn = String(deadline);
      });
    });
  }
}

function sortable(table) {
  table.querySelectorAll("th").forEach((th, column) => {
    th.addEventListener("click", () => {
      const body = table.tBodies[0];
      const ascending = th.dataset.order !== "asc";
      const sorted = Array.from(body.rows).sort((a, b) => {
        const x = a.cells[column].textContent;
        const y = b.cells[column].textContent;
        const nx = Number.parseFloat(x);
        const ny = Number.parseFloat(y);
        const order = !Number.isNaN(nx) && !Number.isNaN(ny) ? nx - ny : x.localeCompare(y);
        return ascending ? order : -order;
      });
      for (const row of sorted) body.appendChild(row);
      table.querySelectorAll("th").forEach((h) => delete h.dataset.order);
      th.dataset.order = ascending ? "asc" : "desc";
    });
  });
}

async function start() {
  document.documentElement.classList.remove("no-js");
  document.querySelectorAll("table.sortable").forEach(sortable);
  slider.addEventListener("input", update);
  if (statistic) statistic.addEventListener("change", update);
  modelFilter.addEventListener("change", update);
  for (const box of gpuBoxes) box.addEventListener("change", update);
  update();
  // The first data go in with the specifications; later ones replace them (view.data).
  const [wh] = await Promise.all([
    vegaEmbed("#wh-chart", { ...specs.wh, datasets: { picks: pickValues() } }, embedOptions),
    drawCurves(),
  ]);
  views.wh = wh.view;
  document.documentElement.dataset.ready = "true";
}

window.energyIndex = { picksAt, rowId, state, views };
start();

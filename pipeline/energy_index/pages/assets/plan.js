// The planner: a typed load and latency target placed on the embedded measured curves, with the
// arithmetic of energy_index/steps/plan.py step for step (the same operations in the same order,
// in the same IEEE doubles) and its rounding (throughputs not at all, energy per token to the
// index's 7 places, the rest to four significant digits), so that the lines shown
// are the ones `energy-index plan` prints (tests/test_report_browser.py compares them).
"use strict";

const planner = JSON.parse(document.getElementById("planner-data").textContent);
const pageData = JSON.parse(document.getElementById("page-data").textContent);

// The curves as steps/plan.py's plan_curves has them, from what is embedded (pages/planner.py):
// a curve's model_id and GPU are its group's; a point's ITLs and max_num_seqs are the page's
// configuration it names, its row_id that configuration's as page.js writes it (rowId, which
// runs first) unless the curve carries its own (a model_id under two nicknames), its
// throughput power ÷ energy as plan_curves divides it (the same IEEE quotient).
function points(curve) {
  const configurations = pageData.configurations;
  const columns = curve.points;
  return columns.configuration.map((at, i) => {
    const maxNumSeqs = configurations.max_num_seqs[at];
    const point = {
      row_id: columns.row_id ? columns.row_id[i] : window.energyIndex.rowId(curve.group, at),
      max_num_seqs: maxNumSeqs,
      output_tokens_per_second: columns.avg_power_watts[i] / columns.energy_per_token_joules[i],
      avg_power_watts: columns.avg_power_watts[i],
      energy_per_token_joules: columns.energy_per_token_joules[i],
      median_itl_ms: configurations.itl[at],
    };
    for (const name of planner.tails) {
      const tail = configurations.tails[name];
      point[`${name}_itl_ms`] = tail ? tail[at] : null;
    }
    return point;
  });
}
for (const curve of planner.curves) {
  const group = pageData.groups[curve.group];
  curve.model ??= group.model; // carried only where it is not the group's
  curve.model_id = group.model_id;
  curve.gpu = group.gpu;
  curve.points = points(curve);
}
const HOURS_PER_YEAR = 8760;
const JOULES_PER_WH = 3600;

// Python's float(f"{v:.4g}"): correctly rounded, an exact tie to the even digit (toPrecision
// rounds a tie up). A tie is exact when the 25-digit expansion ends in 5 then zeros.
function significant(v) {
  if (v === 0) return 0;
  const digits = Math.abs(v).toPrecision(25).replace(/e.*$/, "").replace(".", "")
    .replace(/^0+/, "");
  const tie = digits[4] === "5" && /^0*$/.test(digits.slice(5));
  if (tie && Number(digits[3]) % 2 === 0) return Number((v * (1 - 1e-12)).toPrecision(4));
  return Number(v.toPrecision(4));
}

// Python's round(v, 7): correctly rounded, an exact tie to the even digit (toFixed rounds it up).
function places7(v) {
  const exact = Math.abs(v).toFixed(40);
  const [, fraction] = exact.split(".");
  const tie = fraction[7] === "5" && /^0*$/.test(fraction.slice(8));
  const rounded = Number(v.toFixed(7));
  if (!tie) return rounded;
  const last = Number(rounded.toFixed(7).slice(-1));
  return last % 2 === 0 ? rounded : Number((v * (1 - 1e-12)).toFixed(7));
}

// documents/plan.py's typed(): Python's repr of a float (shortest digits), a whole one without
// '.0'; exponent form below 1e-4 and from 1e16, as Python writes it.
function typed(v) {
  const magnitude = Math.abs(v);
  if (v !== 0 && (magnitude < 1e-4 || magnitude >= 1e16)) {
    const [mantissa, power] = v.toExponential().split("e");
    const sign = power[0] === "-" ? "-" : "+";
    return `${mantissa}e${sign}${power.replace(/^[+-]/, "").padStart(2, "0")}`;
  }
  return String(v);
}

// documents/plan.py's short(): a figure of the table, to four significant digits.
const short = (v) => typed(significant(v));

// Python's f"{v:g}": six significant digits, exponent below 1e-4 or from 1e6.
function g(v) {
  if (v === 0) return "0";
  const exponent = Number(v.toExponential().split("e")[1]);
  if (exponent < -4 || exponent >= 6) {
    const [mantissa, power] = v.toExponential(5).split("e");
    const sign = power[0] === "-" ? "-" : "+";
    const magnitude = power.replace(/^[+-]/, "").padStart(2, "0");
    return `${mantissa.replace(/\.?0+$/, "")}e${sign}${magnitude}`;
  }
  const fixed = v.toPrecision(6);
  return fixed.includes(".") ? fixed.replace(/\.?0+$/, "") : fixed;
}

function meetingTarget(points, statistic, deadline) {
  const key = `${statistic}_itl_ms`;
  return points.filter((p) => p[key] !== null && p[key] !== undefined && p[key] <= deadline);
}

const SAME = planner.same_throughput;
const carries = (throughput, load) => load <= throughput * (1 + SAME);
const isMeasured = (throughput, load) => Math.abs(load - throughput) <= throughput * SAME;

function placed(points, load, statistic) {
  const above = points.findIndex((p) => carries(p.output_tokens_per_second, load));
  if (above < 0) return null;
  const upper = points[above];
  let status, read, low, high;
  if (isMeasured(upper.output_tokens_per_second, load)) {
    [status, read, low, high] = ["measured", [upper], upper.avg_power_watts, upper.avg_power_watts];
  } else if (above === 0) {
    [status, read, low, high] = ["assumed_upper_bound", [upper], null, upper.avg_power_watts];
  } else {
    read = [points[above - 1], upper];
    const powers = [read[0].avg_power_watts, upper.avg_power_watts];
    [status, low, high] = ["between_measured", Math.min(...powers), Math.max(...powers)];
  }
  // True of every point read (steps/plan.py): the power bounds come from either of the two.
  const itl = Math.max(...read.map((p) => p[`${statistic}_itl_ms`]));
  return { status, low, high, itl, configurations: read };
}

// steps/plan.py's fewest: the fewest replicas each carrying at most limit of the load, from one
// under the rounded quotient's ceiling (which can be one over or one short) up.
function fewest(load, limit) {
  let n = Math.max(1, Math.ceil(load / limit) - 1);
  while (load / n > limit) n += 1;
  return n;
}

function familyPlan(curve, load, statistic, deadline, maxUtilization) {
  // steps/plan.py's _eligible: none slower than the planner takes, so every count is exact here.
  const slowest = planner.min_planned_throughput * curve.num_gpus;
  const points = meetingTarget(curve.points, statistic, deadline)
    .filter((p) => p.output_tokens_per_second >= slowest);
  if (!points.length) return null;
  const limits = points.map((p) => p.output_tokens_per_second * (1 + SAME));
  const least = fewest(load, maxUtilization * limits[limits.length - 1]);
  const counts = new Set(limits.map((limit) => Math.max(fewest(load, limit), least)));
  let best = null;
  for (const n of [...counts].sort((a, b) => a - b)) {
    const place = placed(points, load / n, statistic);
    const total = n * place.high;
    if (best === null || total < best.total) best = { total, n, place };
  }
  const fastest = points[points.length - 1];
  const status = best.place.status;
  return {
    ...best,
    fastest,
    utilization: load / best.n / fastest.output_tokens_per_second,
    // steps/plan.py's _plan_on: several servers each at a measured point, and a light end that
    // goes against the assumed bound.
    status: status === "measured" && best.n > 1 ? "measured_per_server" : status,
    contradicted: status === "assumed_upper_bound" && points.length > 1 &&
      points[0].avg_power_watts > points[1].avg_power_watts,
  };
}

function range(low, high) {
  return { low: low === null ? null : significant(low), high: significant(high) };
}

function figures(curve, best, load) {
  const n = best.n;
  const place = best.place;
  const total = { low: place.low === null ? null : n * place.low, high: n * place.high };
  const measured = place.status === "measured";
  const e = measured ? place.configurations[0].energy_per_token_joules : null;
  const joules = measured ? { low: e, high: e } : {
    low: total.low === null ? null : total.low / load,
    high: total.high / load,
  };
  const tokens = curve.output_tokens_per_request;
  const scaled = (value, factor) =>
    range(value.low === null ? null : value.low * factor, value.high * factor);
  return {
    curve,
    replicas: n,
    gpus: n * curve.num_gpus,
    perReplica: load / n,
    utilization: best.utilization,
    fastest: best.fastest,
    tokens: significant(tokens),
    status: best.status,
    contradicted: best.contradicted,
    itl: significant(place.itl),
    configurations: place.configurations,
    power: range(total.low, total.high),
    joules: { low: joules.low === null ? null : places7(joules.low), high: places7(joules.high) },
    response: scaled(joules, tokens / JOULES_PER_WH),
    year: scaled(total, HOURS_PER_YEAR / 1e6),
    facility: facility(curve, place, joules, load),
    rank: [total.high, total.low === null ? Infinity : total.low, n * curve.num_gpus,
      curve.model_id, curve.gpu, curve.num_gpus],
  };
}

function compare(a, b) {
  for (let i = 0; i < a.rank.length; i += 1) {
    if (a.rank[i] < b.rank[i]) return -1;
    if (a.rank[i] > b.rank[i]) return 1;
  }
  return 0;
}

function span(value, unit) {
  if (value.low === null) return `at most ${short(value.high)} ${unit}`;
  return value.low === value.high
    ? `${short(value.low)} ${unit}`
    : `${short(value.low)} – ${short(value.high)} ${unit}`;
}

// documents/plan.py's percent, cut and utilization_lines. toExponential() gives the shortest
// digits, as Python's repr.
const percent = (share) => `${g(significant(share * 100))} %`;
function cut(share) {
  const [mantissa, power] = share.toExponential().split("e");
  return Number(`${mantissa.slice(0, 5)}e${power}`);
}

function utilizationLines(plan, maxUtilization) {
  const words = planner.lines;
  const lines = [`${"utilization".padEnd(13)}` + words.utilization
    .replace("{percent}", percent(cut(plan.utilization)))
    .replace("{row_id}", plan.fastest.row_id)
    .replace("{max_percent}", percent(maxUtilization))
    .replace("{max}", g(maxUtilization))];
  if (plan.contradicted) lines.push(`${"warning".padEnd(13)}${words.assumption_contradicted}`);
  if (plan.utilization >= planner.high_utilization) {
    lines.push(`${"warning".padEnd(13)}` +
      words.high_utilization.replace("{high_percent}", percent(planner.high_utilization)));
  }
  return lines;
}

// documents/plan.py's gap_line: the alternative's upper bound of total power above the plan's.
function gapLine(best, alternative) {
  const gap = (alternative.power.high - best.power.high) / best.power.high;
  const words = planner.lines;
  const tie = gap <= planner.near_tie
    ? words.near_tie.replace("{tolerance}", percent(planner.near_tie)) : "";
  return `${"gap".padEnd(13)}` + words.gap.replace("{percent}", gapPercent(gap))
    .replace("{tie}", tie);
}

// documents/plan.py's gap_percent: a gap beyond the near tie never printed as the tolerance.
function gapPercent(gap) {
  const tolerance = planner.near_tie;
  if (gap > tolerance && significant(gap * 100) <= significant(tolerance * 100)) {
    return planner.lines.beyond_tie.replace("{tolerance}", percent(tolerance));
  }
  return percent(gap);
}

// documents/plan.py's _family_lines, with the facility estimate, without carbon (the command's).
function familyLines(label, plan, statistic, maxUtilization) {
  const c = plan.curve;
  const s = (count) => (count > 1 ? "s" : "");
  // documents/plan.py's counted(): plural but for one.
  const counted = (count, word) => `${count} ${word}${count === 1 ? "" : "s"}`;
  return [
    `${label.padEnd(13)}${c.model} on ${c.gpu}: ${counted(plan.replicas, "replica")} × ` +
      `${counted(c.num_gpus, "GPU")} = ${counted(plan.gpus, "GPU")}, ` +
      `${short(plan.perReplica)} output tokens/s each`,
    ...utilizationLines(plan, maxUtilization),
    `${"status".padEnd(13)}${plan.status}, from the measured configuration` +
      `${s(plan.configurations.length)}:`,
    ...plan.configurations.map(
      (p) => `${"".padEnd(15)}${p.row_id}  max_num_seqs ${p.max_num_seqs}, ` +
        `${typed(p.output_tokens_per_second)} tokens/s, ` +
        `${g(significant(p.avg_power_watts))} W`,
    ),
    `${"latency".padEnd(13)}${statistic} ITL at most ${g(plan.itl)} ms`,
    `${"GPU power".padEnd(13)}${span(plan.power, "W")} (all replicas)`,
    `${"energy".padEnd(13)}${span(plan.joules, "J per output token")}`,
    `${"per response".padEnd(13)}${span(plan.response, "Wh")} (${g(plan.tokens)} output tokens, ` +
      `${planner.lines.family_mean})`,
    `${"per year".padEnd(13)}${span(plan.year, "MWh")} at this load, all year`,
    `${"facility".padEnd(13)}${span(plan.facility.joules, "J per output token")}, ` +
      `${span(plan.facility.year, "MWh per year")} (estimated)`,
    `${"factors".padEnd(13)}` + ["low", "high"].filter((b) => plan.facility.values[b])
      .map((b) => `${b}: ` + Object.entries(plan.facility.values[b])
        .map(([name, value]) => `${name} ${g(value)}`).join(", ")).join("; "),
  ];
}

// steps/impacts.py's energy_bounds through steps/plan.py's _estimated: each end of the GPU range
// (per server) through the factors' bound of the same side, the host's form the lower (low) or
// the higher (high) of the two, in the same operations.
function facility(curve, place, joules, load) {
  const factors = planner.factors;
  const ends = { low: null, high: null };
  for (const [bound, pick] of [["low", Math.min], ["high", Math.max]]) {
    const power = place[bound];
    if (power === null) continue;
    const j = joules[bound];
    const byForm = {
      ratio: factors.host_ratio_to_gpu[bound] * j,
      time: factors.host_power_per_gpu[bound] * curve.num_gpus * j / power,
    };
    const best = pick(byForm.ratio, byForm.time);
    const form = byForm.ratio === best ? "ratio" : "time"; // sorted names: ratio first on a tie
    const server = (j + byForm[form]) * factors.idle_capacity[bound];
    const name = form === "ratio" ? "host_ratio_to_gpu" : "host_power_per_gpu";
    ends[bound] = {
      joules: server * factors.pue[bound],
      values: {
        [`${name}.${bound}`]: factors[name][bound],
        [`idle_capacity.${bound}`]: factors.idle_capacity[bound],
        [`pue.${bound}`]: factors.pue[bound],
      },
    };
  }
  const watts = (end) => (end === null ? null : end.joules * load);
  return {
    joules: range(ends.low === null ? null : ends.low.joules, ends.high.joules),
    year: range(ends.low === null ? null : watts(ends.low) * (HOURS_PER_YEAR / 1e6),
      watts(ends.high) * (HOURS_PER_YEAR / 1e6)),
    values: { low: ends.low && ends.low.values, high: ends.high.values },
  };
}

// The command's reading of a typed number and its refusals, in its words (energy_index/model.py:
// typed_number, checked_deadlines, checked_load; steps/plan.py: _carried), by the grammar and
// the limits the page is given (pages/planner.py), not typed here again.
const numberText = new RegExp(`^(?:${planner.number_text})$`);
const integerText = new RegExp(`^(?:${planner.integer_text})$`);

// Python's typed_number: a BigInt for a whole number as typed (Python's int), else a Number;
// null for text that is no number by the grammar.
function typedNumber(text) {
  if (integerText.test(text)) return BigInt(text.trim().replace(/_/g, "").replace(/^\+/, ""));
  if (!numberText.test(text)) return null;
  const plain = text.trim().replace(/_/g, "").toLowerCase();
  if (/^[+-]?inf/.test(plain)) return plain[0] === "-" ? -Infinity : Infinity;
  return plain.endsWith("nan") ? NaN : Number(plain);
}

// Python's repr of text: quoted, a quote and a backslash escaped, and every character Python
// does not print (controls, format, separators but the space, unassigned) as its escape.
function reprText(text) {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const named = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", [quote]: `\\${quote}` };
  let out = "";
  for (const c of text) {
    const code = c.codePointAt(0);
    if (named[c]) out += named[c];
    else if (c !== " " && /[\p{C}\p{Z}]/u.test(c)) {
      const [mark, width] = code < 0x100 ? ["x", 2] : code < 0x10000 ? ["u", 4] : ["U", 8];
      out += `\\${mark}${code.toString(16).padStart(width, "0")}`;
    } else out += c;
  }
  return quote + out + quote;
}

// errors.shown(value, quote=True): text quoted, cut past the characters a message shows; a
// number as JSON writes it (an int's digits), cut the same way when longer.
function shownQuoted(value) {
  const text = typeof value === "bigint" ? value.toString() : value;
  const characters = Array.from(text);
  if (characters.length > planner.quoted_characters) {
    const cut = characters.slice(0, planner.quoted_characters).join("");
    return `${reprText(cut)}… (${characters.length} characters)`;
  }
  return typeof value === "bigint" ? text : reprText(text);
}

// Python's repr of a float ('0.0', '-1.0', 'nan', 'inf'), and model.json_number's (a whole
// number as its int's digits).
function reprFloat(v) {
  if (Number.isNaN(v)) return "nan";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  if (Object.is(v, -0)) return "-0.0";
  return Number.isInteger(v) && Math.abs(v) < 1e16 ? `${typed(v)}.0` : typed(v);
}
function jsonNumber(v) {
  if (typeof v === "bigint") return v.toString();
  return Number.isInteger(v) ? BigInt(v).toString() : typed(v);
}

// The utilization, the deadline and the load typed, read as the command reads them, in its
// order: the utilization (checked_max_utilization), the deadline (checked_deadline), the load's
// sign (checked_load), then its range (_carried).
function read(loadText, deadlineText, utilizationText) {
  const unit = "output tokens per second";
  const most = typedNumber(utilizationText);
  const share = most === null ? NaN : Number(most);
  if (!(share >= planner.min_max_utilization && share <= 1)) {
    const said = typeof most === "number" ? reprFloat(most) : shownQuoted(most ?? utilizationText);
    return { error: `${said} is not a utilization from ${g(planner.min_max_utilization)} to 1 ` +
      "(a share of the fastest measured configuration: 0.8 for 80 %)" };
  }
  const parts = deadlineText.split(",").map(typedNumber);
  if (parts.includes(null)) {
    return { error: `${shownQuoted(deadlineText)} is not a number of milliseconds or a ` +
      "comma-separated list" };
  }
  const deadlines = parts.map(Number);
  const wrong = deadlines.findIndex((d) => !(d > 0 && d < Infinity));
  if (wrong >= 0) {
    return { error: `${deadlineText.split(",")[wrong].trim()}: every deadline must be a ` +
      "positive, finite number of milliseconds" };
  }
  if (new Set(deadlines).size > 1) {
    return { error: `${shownQuoted(deadlineText)}: one deadline is taken, not several` };
  }
  const load = typedNumber(loadText);
  if (load === null) return { error: `${shownQuoted(loadText)} is not a number of ${unit}` };
  const value = Number(load);
  if (!(Number.isFinite(value) && value > 0)) {
    const said = typeof load === "bigint" ? shownQuoted(load) : reprFloat(load);
    return { error: `${said} is not a positive number of ${unit}` };
  }
  if (value > planner.max_tokens_per_second) {
    return { error: `${jsonNumber(load)} ${unit} is beyond the ` +
      `${planner.max_tokens_per_second_text} the planner takes (no deployment's load; check ` +
      "the unit)" };
  }
  if (value < planner.min_tokens_per_second) {
    return { error: `${jsonNumber(load)} ${unit} is below the ` +
      `${planner.min_tokens_per_second_text} the planner takes (check the unit)` };
  }
  return { load: value, deadline: deadlines[0], utilization: share };
}

// steps/plan.py's plan of a load read, and its refusal of a target no family meets.
function plan(load, statistic, deadline, model, gpu, maxUtilization) {
  const plans = [];
  let slower = false;  // a family in scope meets the target: if none is planned, only too slowly
  for (const curve of planner.curves) {
    if ((model && curve.model_id !== model) || (gpu && curve.gpu !== gpu)) continue;
    const best = familyPlan(curve, load, statistic, deadline, maxUtilization);
    if (best) plans.push(figures(curve, best, load));
    slower = slower || meetingTarget(curve.points, statistic, deadline).length > 0;
  }
  if (!plans.length) {
    const named = [model ? `model ${model}` : "", gpu ? `GPU ${gpu}` : ""].filter(Boolean);
    const floor = slower ? ` at ${planner.min_planned_throughput_text} output tokens/s per ` +
      "GPU or more, the slowest the planner takes," : ",";
    return { error: `no family (${named.join(", ") || "any model and GPU"}) meets the ` +
      `${statistic} ITL target of ${g(deadline)} ms${floor} so none carries ${g(load)} ` +
      "output tokens/s" };
  }
  plans.sort(compare);
  return { plans };
}

const output = document.getElementById("plan-result");
const inputs = ["plan-load", "plan-statistic", "plan-deadline", "plan-model", "plan-gpu",
  "plan-utilization"].map((id) => document.getElementById(id));

function draw() {
  const [load, statistic, deadline, model, gpu, utilization] = inputs;
  output.textContent = "";  // a page error below leaves no plan on screen, not the last one
  const given = read(load.value, deadline.value, utilization.value);
  const result = given.error ? given : plan(given.load, statistic.value, given.deadline,
    model.value, gpu.value, given.utilization);
  if (result.error) {
    output.textContent = `error: ${result.error}`;
  } else {
    const [best, alternative] = result.plans;
    const most = given.utilization;
    const lines = familyLines("plan", best, statistic.value, most);
    lines.push("", ...(alternative
      ? [...familyLines("alternative", alternative, statistic.value, most), gapLine(best, alternative)]
      : [`${"alternative".padEnd(13)}none: no other family (of --model, --gpu) meets the target`]));
    output.textContent = lines.join("\n");
  }
  document.documentElement.dataset.planned = `${load.value}|${statistic.value}|` +
    `${deadline.value}|${model.value}|${gpu.value}|${utilization.value}`;
}

for (const input of inputs) input.addEventListener("input", draw);
draw();

// The impacts section: a boundary switch (GPU measured, server and facility ranges, carbon
// range), a country selector for carbon, and each figure drawn as an interval on a log scale
// common to the rows shown. Every figure is written beside its status and boundary. The carbon
// is not embedded per row and country: it is built here from each row's measured figures, the
// factor bounds and the country's intensity with the steps, order of operations and rounding of
// steps/impacts.py (energy_bounds, carbon_in), so that it shows the same numbers (tested).
"use strict";

const impacts = JSON.parse(document.getElementById("impacts-data").textContent);
const table = document.getElementById("impacts-table");
const caption = document.getElementById("impacts-caption");
const countrySelect = document.getElementById("country");
const switches = Array.from(document.querySelectorAll("input[name=boundary]"));

const WORDS = {
  gpu: ["measured", "gpu", "Wh / M tokens"],
  server: ["estimated", "server", "Wh / M tokens"],
  facility: ["estimated", "facility", "Wh / M tokens"],
  carbon: ["estimated", "facility", "gCO2e / M tokens"],
};

const JOULES_PER_WH = 3600;
const SIGNIFICANT_DIGITS = 4;

// Python's float(f"{x:.4g}"): to four significant digits, an exact tie to the even digit. The
// exact decimal expansion of a double is read from toExponential (99 digits after the first:
// any double that is not a tie differs from one within them).
function significant(x) {
  if (x === 0 || !Number.isFinite(x)) return x;
  const [mantissa, exponent] = Math.abs(x).toExponential(99).split("e");
  const digits = mantissa.replace(".", "");
  let kept = Number(digits.slice(0, SIGNIFICANT_DIGITS));
  const rest = digits.slice(SIGNIFICANT_DIGITS);
  const tie = rest[0] === "5" && /^0*$/.test(rest.slice(1));
  if (rest[0] > "5" || (rest[0] === "5" && !tie) || (tie && kept % 2 === 1)) kept += 1;
  const power = Number(exponent) - (SIGNIFICANT_DIGITS - 1);
  return Math.sign(x) * Number(`${kept}e${power}`);
}

// steps.impacts.energy_bounds: the facility J per output token at one bound (unrounded).
function facilityJoules(inputs, bound) {
  const [joules, watts, gpus] = inputs;
  const f = impacts.factors;
  const side = bound === "low" ? 0 : 1;
  const time = ((f.host_power_per_gpu[side] * gpus) * joules) / watts;
  const ratio = f.host_ratio_to_gpu[side] * joules;
  const host = bound === "low" ? Math.min(time, ratio) : Math.max(time, ratio);
  return (joules + host) * f.idle_capacity[side] * f.pue[side];
}

// steps.impacts.carbon_in: gCO2e per million output tokens, [low, high].
function carbonOf(row, gPerKwh) {
  return ["low", "high"].map((bound) =>
    significant((((facilityJoules(row.inputs, bound) * 1e6) / JOULES_PER_WH) / 1000) * gPerKwh),
  );
}

function rangeOf(boundary, row) {
  if (boundary === "gpu") return [row.measured, row.measured];
  if (boundary === "carbon") return carbonOf(row, impacts.countries[countrySelect.value].g_per_kwh);
  return row[boundary];
}

// A row's cells (pages/impacts.py): model, GPU, GPUs, then status, boundary, figure and the
// interval, whose track and bar are made here, once (written in the page, they were 0.76 MB of
// a 10⁵-configuration page).
const FIRST_FIGURE_CELL = 3;

function barOf(cell) {
  if (!cell.firstChild) {
    const track = document.createElement("span");
    track.className = "track";
    track.append(document.createElement("span"));
    track.firstChild.className = "bar";
    cell.append(track);
  }
  return cell.firstChild.firstChild;
}

function chosen() {
  return switches.find((input) => input.checked).value;
}

function draw() {
  const boundary = chosen();
  const [status, covered, unit] = WORDS[boundary];
  const ranges = impacts.rows.map((row) => rangeOf(boundary, row));
  const positive = ranges.flat().filter((x) => x > 0);
  const low = Math.log10(Math.min(...positive));
  const span = Math.max(Math.log10(Math.max(...positive)) - low, 1e-9);
  const at = (x) => (x > 0 ? ((Math.log10(x) - low) / span) * 100 : 0);
  for (const tr of table.tBodies[0].rows) {
    const number = Number(tr.dataset.row);
    const [a, b] = ranges[number];
    const [statusCell, boundaryCell, figureCell] = [...tr.cells].slice(FIRST_FIGURE_CELL);
    statusCell.textContent = status;
    boundaryCell.textContent = covered;
    figureCell.textContent =
      a === b && status === "measured" ? `${a} ${unit}` : `${a} – ${b} ${unit}`;
    const bar = barOf(tr.cells[FIRST_FIGURE_CELL + 3]);
    bar.style.left = `${at(a)}%`;
    bar.style.width = `${Math.max(at(b) - at(a), 0.6)}%`;
    bar.classList.toggle("point", status === "measured");
    tr.dataset.status = status;
  }
  const country = impacts.countries[countrySelect.value];
  caption.textContent =
    boundary === "gpu"
      ? "GPU energy as measured (status measured, boundary gpu), Wh per million output tokens."
      : boundary === "carbon"
        ? `Carbon of the facility's energy in ${country.name} (${country.year}, ` +
          `${country.g_per_kwh} gCO2e/kWh, location-based annual average): estimated ranges, ` +
          "gCO2e per million output tokens."
        : `Energy within the ${covered} boundary: estimated ranges, Wh per million output tokens.`;
  document.documentElement.dataset.impactsDrawn = `${boundary}:${countrySelect.value}`;
}

for (const input of switches) input.addEventListener("change", draw);
countrySelect.addEventListener("change", draw);
draw();
document.documentElement.dataset.impactsReady = "true";

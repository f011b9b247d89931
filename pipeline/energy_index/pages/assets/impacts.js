// The impacts section: a boundary switch (GPU measured, server and facility ranges, carbon
// range), a country selector for carbon, and each figure drawn as an interval on a log scale
// common to the rows shown. Every figure is written beside its status and boundary.
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

function rangeOf(boundary, row, number) {
  if (boundary === "gpu") return [row.measured, row.measured];
  if (boundary === "carbon") return impacts.carbon[countrySelect.value][number];
  return row[boundary];
}

function chosen() {
  return switches.find((input) => input.checked).value;
}

function draw() {
  const boundary = chosen();
  const [status, covered, unit] = WORDS[boundary];
  const ranges = impacts.rows.map((row, number) => rangeOf(boundary, row, number));
  const positive = ranges.flat().filter((x) => x > 0);
  const low = Math.log10(Math.min(...positive));
  const span = Math.max(Math.log10(Math.max(...positive)) - low, 1e-9);
  const at = (x) => (x > 0 ? ((Math.log10(x) - low) / span) * 100 : 0);
  for (const tr of table.tBodies[0].rows) {
    const number = Number(tr.dataset.row);
    const [a, b] = ranges[number];
    tr.querySelector(".impact-status").textContent = status;
    tr.querySelector(".impact-boundary").textContent = covered;
    tr.querySelector(".impact-figure").textContent =
      a === b && status === "measured" ? `${a} ${unit}` : `${a} – ${b} ${unit}`;
    const bar = tr.querySelector(".bar");
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

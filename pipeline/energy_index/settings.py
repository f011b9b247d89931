"""Every default, written once: the command line's options, the Python API's keyword arguments
and the records of model.py read them from here.

Nothing here reads or writes anything and nothing is imported: the command line reads its
defaults before it loads polars or httpx. Changing a value here changes every command and every
function that has it as a default (tests/test_settings.py checks the command line's options).
"""

from __future__ import annotations

# -- where the data comes from -------------------------------------------------------------------
UPSTREAM_REPOSITORY = "ml-energy/leaderboard"
UPSTREAM_URL = f"https://github.com/{UPSTREAM_REPOSITORY}"
UPSTREAM_REF = "master"
GITHUB_API_BASE = "https://api.github.com"
GITHUB_RAW_BASE = "https://raw.githubusercontent.com"
LIVE = "live"  # a source: the upstream repository itself
# The snapshot the committed output was built from, vendored in the repository: builds and
# audits default to it, so that they run offline and give the committed bytes.
VENDORED_SNAPSHOT = "snapshots/ml-energy-leaderboard"
# The second upstream: grid carbon intensity by country (impacts.json), vendored like the first.
CARBON_REPOSITORY = "mlco2/codecarbon"
CARBON_REF = "master"
CARBON_PATH = "codecarbon/data/private_infra/global_energy_mix.json"
CARBON_SNAPSHOT = "snapshots/codecarbon-energy-mix"

# -- what is built ---------------------------------------------------------------------------------
DEFAULT_TASK = "lm-arena-chat"
DEFAULT_ITL_DEADLINE_MS = 500.0
DEFAULT_ITL_STATISTIC = "median"  # the index selects on the median ITL unless told otherwise
# The latency profiles' deadline grid: log-spaced (1-2-5 per decade) from 5 to 500 ms, so that
# its median column at 500 ms is the default index.
PROFILE_DEADLINES_MS = (5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0)
# The GPU pair whose energy ratio the profiles give per model: numerator, denominator.
GPU_RATIO = ("B200", "H100")
# The data check of output lengths across GPUs (steps/checks.py): one model and configuration on
# two GPU types whose average output lengths differ by more than this factor is a finding. The
# real spread is at most 1.14 on upstream's v3 data, bar the two Nemotron Nano v2 on chat (2–3).
OUTPUT_LENGTH_GPU_FACTOR = 1.5
# The quantiles of a pick's output-length distribution its energy per response is given at.
RESPONSE_QUANTILES = (0.10, 0.50, 0.90, 0.99)
REPORT_DEADLINES_MS = (50.0, 100.0, 250.0, 500.0)  # the sweep the report page shows
# The planner (energy-index plan): the largest load it takes, in output tokens/s, a thousand
# times the site's largest grid load; more is a unit mistake, not a deployment. The site's
# plan.json gives the plan at each load of its grid: 10² to 10⁶ tokens/s, ×1, ×2, ×5 a decade.
MAX_PLAN_TOKENS_PER_SECOND = 1e9
# The smallest: 10⁻³ output tokens/s (a token in about 17 minutes). Below it energy per token
# runs past any measurement's scale and, near the smallest double, to infinity (not JSON).
MIN_PLAN_TOKENS_PER_SECOND = 1e-3
# The planner of a diffusion task: the largest and the smallest load it takes, in images or
# videos per second (a video load is typed per hour: 3.6e9 and 0.0036 per hour). A million
# images a second is a thousand times the largest measured family's at a thousand replicas.
MAX_PLAN_OUTPUTS_PER_SECOND = 1e6
MIN_PLAN_OUTPUTS_PER_SECOND = 1e-6
# The slowest configuration the planners plan on, per second and GPU (output tokens, images,
# videos): one a day. At the largest load a planner takes and the least utilization, a family
# that slow needs 10¹⁵ GPUs, below 2**53, so every count of servers and of GPUs is exact in a
# float, as the page's planner counts (JavaScript's numbers): past it a count and the next can
# be one float. A throughput (power ÷ energy per output, each a positive float upstream) can
# also come out 0 or under 10⁻²⁹⁹, where a count is no finite number.
MIN_PLANNED_THROUGHPUT = 1e-5
# A load within this relative difference of a measured throughput is that throughput (status
# measured): upstream's output_throughput_tokens_per_sec and avg_power_watts ÷
# energy_per_token_joules differ in the last binary digit (3e-16), and a user types either.
PLAN_SAME_THROUGHPUT = 1e-9
# The share of the fastest measured configuration meeting the target a server may carry
# (``--max-utilization``), by default all of it: the measured maximum is the one figure the data
# holds, headroom for bursts is the operator's choice, and at 1 a plan at an index
# pick's throughput is the index figure. From PLAN_HIGH_UTILIZATION on a plan says it leaves
# little room; below MIN_MAX_UTILIZATION a value is a unit mistake (80 % is 0.8, not 0.008).
DEFAULT_MAX_UTILIZATION = 1.0
MIN_MAX_UTILIZATION = 0.1
PLAN_HIGH_UTILIZATION = 0.9
# An alternative whose upper bound of total GPU power is within this share of the plan's (the
# published figures, inclusive) is a near tie: a 5 % gap is inside what the data tells apart
# (the measured power of one configuration varies by a few percent from run to run).
PLAN_NEAR_TIE = 0.05
PLAN_GRID_TOKENS_PER_SECOND = tuple(
    float(m * 10**e) for e in range(2, 7) for m in (1, 2, 5) if m * 10**e <= 10**6
)
# The site's plan grid also gives, at each load, the best plan with no server above this share of
# its family's fastest configuration: 20 % headroom, an operating margin a buyer can size a fleet
# with (the command and the API take any --max-utilization from 0.1 to 1).
PLAN_GRID_MAX_UTILIZATION = 0.8
# The ML.ENERGY stability rule (steps/stability.py).
MIN_BATCH_UTILIZATION = 0.85
MIN_STEADY_STATE_SECONDS = 20.0

# -- where it goes, and the names of the files written -------------------------------------------
DEFAULT_OUT = "output/index.json"
DEFAULT_REPORT_PAGE = "output/report.html"
DEFAULT_SITE = "site"
DEFAULT_CACHE = ".cache/upstream"
TABLE_FORMATS = ("csv", "parquet")
REPORT_SUFFIX = ".report.json"  # <stem>.report.json beside an index: how it was built
ERRORS_SUFFIX = ".errors.json"  # every failure of a refused build
CHANGELOG_SUFFIX = ".changelog.json"  # the latest change of a regenerated index
EXTENDED_SUFFIX = ".extended.json"  # the index with robustness figures per row
DEADLINES_NAME = "deadlines.json"
CURVES_NAME = "curves.json"
PROFILES_NAME = "profiles.json"  # latency profiles (build --profiles)
RESPONSES_NAME = "responses.json"  # energy per response (build --responses)
PLAN_NAME = "plan.json"  # the plans at the grid of loads (the site's, per task)
CHANGELOG_NAME = "CHANGELOG.md"  # shared by every index in a folder
CARBON_CHANGELOG_NAME = "carbon.changelog.json"  # the latest change of the carbon snapshot

# -- how hard a download tries, how long a regeneration waits ------------------------------------
HTTP_RETRIES = 3  # attempts after the first
HTTP_TIMEOUT_SECONDS = 30.0
HTTP_BACKOFF_SECONDS = 1.0
HTTP_MAX_BYTES = 64 << 20
# The whole command's network time, every request, retry and Retry-After wait included: ten
# minutes fetches upstream many times over, and no server's answer holds a run longer.
HTTP_TIMEOUT_TOTAL_SECONDS = 600.0
# The largest index file read (validate, audit, report, site): four times the index of the
# benchmarks' 10⁶ configurations (30,927 rows, 17 MB), far below a task file's 2 GiB.
MAX_INDEX_BYTES = 64 << 20
LOCK_TIMEOUT_SECONDS = 600.0
# How much of a file found at an output path is read, from each end, to tell whether this tool
# wrote it (build, regenerate, report replace only their own outputs unless --force).
RECOGNISED_BYTES = 8 << 10

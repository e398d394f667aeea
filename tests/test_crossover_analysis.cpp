// apps/common/crossover_analysis.h on numbers made by hand: the spread of repeated times,
// where the GPU overtakes the CPU (with the log-log interpolation worked out on paper), the
// regime rule at and around each of its thresholds, and the regime ranges.
#include <doctest/doctest.h>

#include <cmath>

#include "apps/common/crossover_analysis.h"

using engine::apps::Crossover;
using engine::apps::Regime;
using engine::apps::SizeTimes;
using engine::apps::classify_regime;
using engine::apps::find_crossover;

TEST_CASE("spread_of: median of odd and even counts, min, max; empty is all zero") {
  const engine::apps::Spread odd = engine::apps::spread_of({5.0, 1.0, 3.0});
  CHECK(odd.median == 3.0);
  CHECK(odd.min == 1.0);
  CHECK(odd.max == 5.0);
  CHECK(odd.count == 3);
  CHECK(engine::apps::spread_of({4.0, 1.0, 2.0, 3.0}).median == 2.5);
  CHECK(engine::apps::spread_of({}).count == 0);
}

TEST_CASE("find_crossover: bracketed crossing, interpolated on log-log axes") {
  // gpu / cpu = 2 at size 8 and 1/2 at size 32: log ratio +ln2 and -ln2, so the zero is half
  // way between ln 8 and ln 32 on the log axis: size sqrt(8 * 32) = 16.
  const Crossover x = find_crossover({{4, 1.0, 8.0}, {8, 1.0, 2.0}, {32, 1.0, 0.5}, {64, 2.0, 0.5}});
  REQUIRE(x.ahead_from.has_value());
  CHECK(*x.ahead_from == 32);
  CHECK(*x.last_behind == 8);
  CHECK(*x.first_win == 32);
  CHECK(x.estimate == doctest::Approx(16.0));
  // Not half way: ratio 4 (log 2 ln2) at 10, 1/2 (-ln2) at 100: t = 2/3 of the way in log size.
  const Crossover y = find_crossover({{10, 1.0, 4.0}, {100, 2.0, 1.0}});
  CHECK(y.estimate == doctest::Approx(std::pow(10.0, 1.0 + 2.0 / 3.0)));
  CHECK(engine::apps::describe(x, "n").find("ahead from n = 32 on") != std::string::npos);
}

TEST_CASE("find_crossover: the GPU must stay ahead; an early win that is lost again does not count") {
  // Wins at 2, loses at 4 (a tie is not a win), wins from 8 on.
  const Crossover x = find_crossover({{1, 1.0, 2.0}, {2, 1.0, 0.9}, {4, 1.0, 1.0}, {8, 1.0, 0.5}, {16, 1.0, 0.1}});
  CHECK(*x.first_win == 2);
  CHECK(*x.ahead_from == 8);
  CHECK(*x.last_behind == 4);
  CHECK(x.estimate == doctest::Approx(4.0));  // ratio exactly 1 at 4: the crossing is there
  CHECK(engine::apps::describe(x, "batch").find("also won at 2 but fell behind again") != std::string::npos);
  // Ahead in the middle, behind again at the largest size: no crossover.
  const Crossover lost = find_crossover({{1, 1.0, 2.0}, {2, 1.0, 0.5}, {4, 1.0, 3.0}});
  CHECK(*lost.first_win == 2);
  CHECK_FALSE(lost.ahead_from.has_value());
  CHECK(engine::apps::describe(lost, "n") == "the GPU wins at n = 2 but not at the largest size measured");
}

TEST_CASE("find_crossover: ahead everywhere, behind everywhere, nothing measured") {
  const Crossover ahead = find_crossover({{1, 2.0, 1.0}, {2, 2.0, 1.0}});
  CHECK(*ahead.ahead_from == 1);
  CHECK_FALSE(ahead.last_behind.has_value());
  CHECK(ahead.estimate == 0.0);
  CHECK(engine::apps::describe(ahead, "n") == "the GPU is faster at every size measured (n = 1 and up)");
  const Crossover behind = find_crossover({{1, 1.0, 2.0}, {2, 1.0, 2.0}});
  CHECK_FALSE(behind.first_win.has_value());
  CHECK_FALSE(behind.ahead_from.has_value());
  CHECK(engine::apps::describe(behind, "width") == "the CPU is faster at every size measured");
  CHECK_FALSE(find_crossover({}).first_win.has_value());
  const nlohmann::json j = engine::apps::to_json(behind, "width");
  CHECK(j["ahead_from"].is_null());
  CHECK(j["estimate"].is_null());
}

TEST_CASE("classify_regime: transfer first, then the launch floor or the replay's saving, else compute") {
  // Dyadic numbers, so that the thresholds are exact: a floor of 0.25 per launch and 2
  // launches put the launch line at 2 x 2 x 0.25 = 1.0.
  const double floor = 0.25;
  CHECK(classify_regime(2.0, 1.5, 2, floor) == Regime::Transfer);  // copies 1.5 of 2.0
  // Exactly half is not more than the rest; the rest, 1.0, is on the launch line: launch.
  CHECK(classify_regime(2.0, 1.0, 2, floor) == Regime::Launch);
  CHECK(classify_regime(1.0, 0.0, 2, floor) == Regime::Launch);
  CHECK(classify_regime(1.125, 0.0, 2, floor) == Regime::Compute);
  CHECK(classify_regime(1.5, 0.25, 2, floor) == Regime::Compute);  // the rest, 1.25, is past it
  // The seed MLP's step on the H100 as the docs quote it, 45 us for 23 launches at a 3 us
  // floor: launch-bound; a step of 1 ms with the same kernels is not.
  CHECK(classify_regime(45e-6, 0.0, 23, 3e-6) == Regime::Launch);
  CHECK(classify_regime(1e-3, 0.0, 23, 3e-6) == Regime::Compute);
  // Past the floor's line, but a graph replay of the same kernels saves half of the rest:
  // host overhead per op that the device's floor does not count. Less than half: compute.
  CHECK(classify_regime(4.0, 0.0, 2, floor, 2.0) == Regime::Launch);
  CHECK(classify_regime(4.0, 1.0, 2, floor, 1.5) == Regime::Launch);  // rest 3.0, saves 1.5
  CHECK(classify_regime(4.0, 0.0, 2, floor, 1.75) == Regime::Compute);
  // Without a launch count or a floor only the transfer rule and the replay's saving decide.
  CHECK(classify_regime(1.0, 0.0, 0, floor) == Regime::Unknown);
  CHECK(classify_regime(1.0, 0.0, 2, 0.0) == Regime::Unknown);
  CHECK(classify_regime(1.0, 0.75, 0, 0.0) == Regime::Transfer);
  CHECK(classify_regime(1.0, 0.0, 0, 0.0, 0.5) == Regime::Launch);
}

TEST_CASE("regime_runs: consecutive equal regimes as ranges") {
  using engine::apps::regime_runs;
  CHECK(regime_runs({16, 32, 64, 128}, {Regime::Launch, Regime::Launch, Regime::Compute, Regime::Compute}) ==
        "launch 16-32, compute 64-128");
  CHECK(regime_runs({1, 2, 4}, {Regime::Transfer, Regime::Launch, Regime::Transfer}) ==
        "transfer 1, launch 2, transfer 4");
  CHECK(regime_runs({}, {}).empty());
}

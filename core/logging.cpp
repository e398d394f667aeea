#include "core/logging.h"

#include <spdlog/spdlog.h>

#include "core/error.h"

namespace engine {

void set_log_level(const std::string& level) {
  const spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  // from_str maps every unknown name to "off"; only accept "off" when it was asked for.
  ENGINE_CHECK(parsed != spdlog::level::off || level == "off", "unknown log level '", level,
               "' (use trace, debug, info, warn, error, critical or off)");
  spdlog::set_level(parsed);
}

}  // namespace engine

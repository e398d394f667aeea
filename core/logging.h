// The engine logs through spdlog; apps set the level from --log-level.
#pragma once
#include <string>

namespace engine {

// Accepts trace, debug, info, warn, error, critical, off; throws engine::Error otherwise.
void set_log_level(const std::string& level);

}  // namespace engine

// CLI11's App, declared only, for the headers that name it in a declaration (a function that
// registers flags): the .cpp that defines such a function includes apps/common/app_flags.h,
// and <CLI/CLI.hpp> in a header would cost every file that includes it ~8 s of compiling.
#pragma once

namespace CLI {
class App;
}

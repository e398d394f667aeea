// Fuzz target: the CSV reader, datasets::read_csv and datasets::split_csv (datasets/csv.h).
//
// What is fuzzed: the whole file, read twice, with ',' and with '\t' as the delimiter (a tab is
// also whitespace around a cell everywhere else, so that path differs). read_csv finds the lines
// (LF or CRLF, blank ones skipped, a UTF-8 byte-order mark), splits cells with their quotes and
// "" escapes, checks the header's names and every row's cell count, and reads each cell as a
// number (std::from_chars, a '+', the out-of-range and NaN refusals). A table it returns is then
// split twice: its last column as float targets and as int32 labels (the labels' range and
// whole-number checks).
//
// Why: CSV files come from spreadsheets, pandas, hand edits and half-finished downloads; any of
// them must give a table or one engine::Error naming the line and column, never a crash, a read
// past a line, or a NaN slipping into the tensors. Seeds: fuzz/corpus/csv/ (valid files with
// CRLF, quotes, a byte-order mark, blank lines, tabs; ragged rows, empty cells, NaN, 1e400, an
// unterminated quote, a header only, an empty file).
//
// The contract checked: a table that is read has at least one column and one row, values of
// rows x columns, each finite and within float32's range, rising line numbers after the
// header's; a split gives x of (rows, columns - 1) float32 and y of (rows,) float32 or int32,
// labels from 0 to 2^31 - 1. Anything else, or another exception than engine::Error, is a
// finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/error.h"
#include "datasets/csv.h"
#include "fuzz/temp_file.h"

namespace {

using namespace engine;
using namespace engine::datasets;

void check_table(const CsvTable& t) {
  if (t.cols() < 1 || t.rows() < 1 || static_cast<int64_t>(t.values.size()) != t.rows() * t.cols())
    std::abort();
  for (double v : t.values)
    if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max()) std::abort();
  for (int64_t r = 0; r < t.rows(); ++r)
    if (t.lines[static_cast<size_t>(r)] < (r == 0 ? 2 : t.lines[static_cast<size_t>(r - 1)] + 1))
      std::abort();
}

void check_split(const CsvTable& t, CsvTarget kind) {
  CsvData d;
  try {
    d = split_csv(t, {static_cast<int>(t.cols() - 1)}, kind);
  } catch (const Error&) {
    // One column only (no feature left), or a value that is no label: documented refusals.
    return;
  }
  if (d.x.shape() != Shape{t.rows(), t.cols() - 1} || d.x.dtype() != DType::F32) std::abort();
  if (d.y.shape() != Shape{t.rows()}) std::abort();
  if (kind == CsvTarget::Labels) {
    if (d.y.dtype() != DType::I32) std::abort();
    for (int32_t label : d.y.to_int_vector())
      if (label < 0) std::abort();
  } else if (d.y.dtype() != DType::F32) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::TempFile file("csv");
  const std::string& path = file.write(data, size);
  for (char delimiter : {',', '\t'}) {
    CsvOptions options;
    options.delimiter = delimiter;
    CsvTable table;
    try {
      table = read_csv(path, options);
    } catch (const Error&) {
      continue;  // a refused file: the documented outcome for bad input
    }
    check_table(table);
    check_split(table, CsvTarget::Values);
    check_split(table, CsvTarget::Labels);
  }
  return 0;
}

// CSV files of numbers with a header row: your own tabular data as tensors.
//
//   // iris.csv:                        // then:
//   // sepal_len,sepal_wid,species      CsvTable t = read_csv("iris.csv");
//   // 5.1,3.5,0                        CsvData d = split_csv(t, {"species"}, CsvTarget::Labels);
//   // 6.2,2.9,1                        // d.x: (2, 2) float32, d.y: (2,) int32
//   //                                  // d.feature_names: sepal_len, sepal_wid
//
// What a file may hold:
//   - line 1 (after blank lines, if any) is the header: one name per column. Names are trimmed
//     of spaces and tabs; a name may be quoted ("petal ""width"", cm"), which lets it hold the
//     delimiter or quotes. Names must be unique, except that several may be empty (pandas'
//     to_csv writes an unnamed index column); an empty name is reachable by index only.
//   - every other non-blank line is a row with exactly as many cells as the header. A cell is a
//     decimal number as C++'s std::from_chars reads it, with an optional leading '+' and spaces
//     or tabs around it ("1", "-2.5", " 3e-4 ", "+.5"); it may be quoted ("1.5").
//   - blank lines (only spaces, tabs or a '\r') are skipped wherever they are; CRLF line ends
//     and a UTF-8 byte-order mark (Excel's "CSV UTF-8") are accepted.
// Refused, each with one line naming the file and, for a cell, its line, its column (counted
// from 1, as a spreadsheet does) with the header's name, and the text: an empty file, a file
// with a header but no rows, a row with too few or too many cells, an empty cell, text that is
// not a number, a number beyond float32's range, and NaN or infinity. NaN and "inf" are refused
// on purpose: in a CSV they almost always stand for a missing value, and one NaN in the inputs
// turns every loss into NaN a few steps later, far from the cause. Fill or drop such rows
// first (pandas: df.dropna(), df.fillna(0)).
//
// Values are kept as doubles in the table, so integer labels up to 2^53 stay exact; x and y
// are float32 (or int32 labels), the engine's dtypes.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace engine::datasets {

struct CsvOptions {
  char delimiter = ',';  // ';' for many European exports, '\t' for TSV
};

struct CsvTable {
  std::string path;                  // as given to read_csv, for messages
  std::vector<std::string> columns;  // header names, in file order
  std::vector<double> values;        // rows() x cols(), row after row
  std::vector<int64_t> lines;        // each row's line number in the file (1-based)

  int64_t rows() const { return static_cast<int64_t>(lines.size()); }
  int64_t cols() const { return static_cast<int64_t>(columns.size()); }
  double at(int64_t row, int64_t col) const {
    return values[static_cast<size_t>(row * cols() + col)];
  }
  // The 0-based index of the column named `name`; throws engine::Error naming the file and
  // listing the columns when there is none.
  int64_t column_index(const std::string& name) const;
};

// Reads and checks the whole file. Throws engine::Error with one line naming the file and
// the problem (see the top of this file).
CsvTable read_csv(const std::string& path, const CsvOptions& options = {});

// A column, by its header name or by its 0-based index (as in C++ and pandas' iloc; messages
// count from 1). Converts implicitly, so {"species"} and {0, 3} both work.
class CsvColumn {
 public:
  // Implicit on purpose: a list of names or of indices reads as one.
  CsvColumn(const char* name) : name_(name) {}
  CsvColumn(std::string name) : name_(std::move(name)) {}
  CsvColumn(int index) : index_(index), by_index_(true) {}
  bool by_index() const { return by_index_; }
  const std::string& name() const { return name_; }
  int64_t index() const { return index_; }

 private:
  std::string name_;
  int64_t index_ = -1;
  bool by_index_ = false;
};

enum class CsvTarget {
  Values,  // y float32: regression targets, or one-hot columns
  Labels,  // y int32: class indices, each a whole number from 0 to 2^31 - 1
};

struct CsvData {
  Tensor x;  // (rows, features) float32
  // (rows,) for one target column, (rows, targets) for several; float32 or int32 as asked.
  // Undefined when no target column was asked for (data to predict on).
  Tensor y;
  std::vector<std::string> feature_names, target_names;
};

// Splits a table into features and targets, on the CPU. `targets`: the target columns, in the
// order y holds them. `features`: the feature columns in the order x holds them; empty means
// every column that is not a target, in file order. Throws engine::Error naming the file for an
// unknown name, an index out of range, a column asked for twice or as both feature and target,
// no feature column left, and, for Labels, a value that is not a whole number from 0 to
// 2,147,483,647 (naming its line and column).
CsvData split_csv(const CsvTable& table, const std::vector<CsvColumn>& targets,
                  CsvTarget kind = CsvTarget::Values, const std::vector<CsvColumn>& features = {});

// read_csv and split_csv in one call.
CsvData load_csv(const std::string& path, const std::vector<CsvColumn>& targets,
                 CsvTarget kind = CsvTarget::Values, const CsvOptions& options = {});

}  // namespace engine::datasets

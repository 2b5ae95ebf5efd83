// Table: the CLI's aligned plain-text tables (kubectl-style): a header row in capitals, columns
// left-aligned and separated by three spaces, the last column unpadded.
//
// Widths count UTF-8 characters, not bytes. Cells are made safe for a terminal: control
// characters (newlines, escapes) become spaces, so text from the server can neither break the
// layout nor drive the terminal. A row with fewer cells than headers is padded with empty
// cells; extra cells are dropped.
// For `--watch`, rows printed later keep the first table's widths: FormatRow with Widths().
// Thread-compatible value type.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers);

  void AddRow(std::vector<std::string> cells);

  // Every line, each ending in '\n'; the header alone when there are no rows.
  std::string Render() const;
  // The width of each column: its widest cell or header.
  std::vector<size_t> Widths() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// One line ('\n'-terminated) with cells padded to `widths` (a cell wider than its column
// pushes the rest of the line right).
std::string FormatRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths);

// `text` with control characters replaced by spaces.
std::string SafeCell(std::string_view text);

// UTF-8 characters in `text`.
size_t DisplayWidth(std::string_view text);

}  // namespace tessera::cli

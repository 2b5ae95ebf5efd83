#include "cli/table.h"

#include <algorithm>
#include <utility>

namespace tessera::cli {
namespace {

constexpr std::string_view kGap = "   ";

}  // namespace

std::string SafeCell(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  return out;
}

size_t DisplayWidth(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  for (std::string& cell : cells) cell = SafeCell(cell);
  rows_.push_back(std::move(cells));
}

std::vector<size_t> Table::Widths() const {
  std::vector<size_t> widths;
  for (const std::string& h : headers_) widths.push_back(DisplayWidth(h));
  for (const std::vector<std::string>& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  }
  return widths;
}

std::string Table::Render() const {
  const std::vector<size_t> widths = Widths();
  std::string out = FormatRow(headers_, widths);
  for (const std::vector<std::string>& row : rows_) out += FormatRow(row, widths);
  return out;
}

std::string FormatRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths) {
  std::string line;
  for (size_t i = 0; i < cells.size() && i < widths.size(); ++i) {
    const std::string cell = SafeCell(cells[i]);
    line += cell;
    if (i + 1 < cells.size() && i + 1 < widths.size()) {
      const size_t width = DisplayWidth(cell);
      if (width < widths[i]) line.append(widths[i] - width, ' ');
      line += kGap;
    }
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

}  // namespace tessera::cli

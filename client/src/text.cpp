#include "text.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <system_error>

namespace gpu_routing::text {

std::string format_double(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buffer[32];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  if (error != std::errc()) return std::to_string(value);
  return std::string(buffer, end);
}

std::optional<double> parse_double(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc() && end == text.data() + text.size()) return value;
  // from_chars reads "inf" and "nan" but not PostgreSQL's "Infinity" / "-Infinity" / "NaN".
  if (text == "Infinity") return std::numeric_limits<double>::infinity();
  if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  return std::nullopt;
}

std::optional<std::int64_t> parse_int64(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string bigint_array_literal(const std::vector<std::int64_t>& values) {
  std::string literal;
  literal.reserve(2 + values.size() * 8);
  literal += '{';
  char buffer[24];
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) literal += ',';
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, values[i]);
    literal.append(buffer, result.ptr);
  }
  literal += '}';
  return literal;
}

bool parse_double_array(std::string_view text, double* out, std::size_t count) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return false;
  const char* at = text.data() + 1;
  const char* const end = text.data() + text.size() - 1;  // the closing brace
  if (at == end) return count == 0;
  for (std::size_t i = 0; i < count; ++i) {
    const auto [stop, error] = std::from_chars(at, end, out[i]);
    if (error != std::errc() || (stop != end && *stop != ',')) {
      // What from_chars leaves to parse_double ("Infinity", "NaN"); NULL and the rest fail.
      const char* comma = at;
      while (comma != end && *comma != ',') ++comma;
      const auto value = parse_double(std::string_view(at, static_cast<std::size_t>(comma - at)));
      if (!value) return false;
      out[i] = *value;
      at = comma;
    } else {
      at = stop;
    }
    if (at == end) return i + 1 == count;
    ++at;  // the comma
  }
  return false;  // more elements than count
}

namespace {

std::string_view trim(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
    line.remove_suffix(1);
  }
  return line;
}

bool strip_prefix(std::string_view& line, std::string_view prefix) {
  if (line.substr(0, prefix.size()) != prefix) return false;
  line = trim(line.substr(prefix.size()));
  return true;
}

}  // namespace

ServerMessage parse_server_message(std::string_view message) {
  ServerMessage parts;
  bool first = true;
  while (!message.empty()) {
    const std::size_t newline = message.find('\n');
    std::string_view line = message.substr(0, newline);
    message = newline == std::string_view::npos ? std::string_view() : message.substr(newline + 1);
    if (first) {
      first = false;
      std::string_view primary = trim(line);
      for (const char* severity : {"ERROR:", "FATAL:", "PANIC:"}) {
        if (strip_prefix(primary, severity)) break;
      }
      parts.primary = std::string(primary);
      continue;
    }
    if (strip_prefix(line, "DETAIL:")) {
      parts.detail = std::string(line);
    } else if (strip_prefix(line, "HINT:")) {
      parts.hint = std::string(line);
    }
  }
  return parts;
}

std::string one_line(std::string_view message) {
  std::string joined;
  while (!message.empty()) {
    const std::size_t newline = message.find('\n');
    const std::string_view line = trim(message.substr(0, newline));
    message = newline == std::string_view::npos ? std::string_view() : message.substr(newline + 1);
    if (line.empty()) continue;
    if (!joined.empty()) joined += ' ';
    joined += line;
  }
  return joined;
}

std::string json_string(std::string_view value) {
  std::string quoted = "\"";
  for (const char c : value) {
    switch (c) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      case '\r':
        quoted += "\\r";
        break;
      case '\t':
        quoted += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          quoted += escaped;
        } else {
          quoted += c;
        }
    }
  }
  return quoted + '"';
}

std::string csv_field(std::string_view value) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(value);
  std::string quoted = "\"";
  for (const char c : value) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

}  // namespace gpu_routing::text

// Text conversions shared by the client library and gpu-route: exact numbers in both directions,
// PostgreSQL array literals, and the parts of a libpq error message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpu_routing::text {

// The shortest decimal text that reads back as the same double ("1.5", "0.1", "1e+300");
// "Infinity", "-Infinity", "NaN" as PostgreSQL spells them.
std::string format_double(double value);

// Parses what PostgreSQL prints for float8 and bigint; nullopt when the text is not a number.
std::optional<double> parse_double(std::string_view text);
std::optional<std::int64_t> parse_int64(std::string_view text);

// "{1,2,3}": a bigint[] literal, passed as a bound text parameter and cast with $n::bigint[].
std::string bigint_array_literal(const std::vector<std::int64_t>& values);

// Reads a one-dimensional float8[] as PostgreSQL prints it ("{1,2.5,Infinity}") into out[0] ..
// out[count - 1]. False, with out partly written, when the text is not such an array of exactly
// count numbers (a NULL element, another shape, another length).
bool parse_double_array(std::string_view text, double* out, std::size_t count);

// A libpq/PostgreSQL error message split into its parts: "ERROR:  x\nDETAIL:  y\nHINT:  z\n..."
struct ServerMessage {
  std::string primary;  // without the "ERROR:  " / "FATAL:  " prefix
  std::string detail;
  std::string hint;
};
ServerMessage parse_server_message(std::string_view message);

// The whole message on one line: lines trimmed and joined with a space.
std::string one_line(std::string_view message);

// A JSON string: quoted, with ", \ and control characters escaped (UTF-8 passes as it is).
std::string json_string(std::string_view value);

// A CSV field (RFC 4180): as it is, or quoted with inner quotes doubled where it holds a comma, a
// quote or a line break.
std::string csv_field(std::string_view value);

}  // namespace gpu_routing::text

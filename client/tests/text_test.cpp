// The text conversions: exact round trips, array literals, libpq messages. No database needed.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "text.hpp"

namespace gpu_routing::text {
namespace {

TEST(ClientText, DoublesRoundTripExactly) {
  for (double value : {0.0, 1.0, 0.1, 1.5, 123456789.123, 1e-300, 1e300, -2.5, 5e-324}) {
    const std::string printed = format_double(value);
    const auto parsed = parse_double(printed);
    ASSERT_TRUE(parsed.has_value()) << printed;
    EXPECT_EQ(*parsed, value) << printed;
  }
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(5), "5");
}

TEST(ClientText, PostgresSpecialValues) {
  EXPECT_EQ(format_double(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(format_double(-std::numeric_limits<double>::infinity()), "-Infinity");
  EXPECT_EQ(format_double(std::nan("")), "NaN");
  EXPECT_TRUE(std::isinf(*parse_double("Infinity")));
  EXPECT_TRUE(std::isnan(*parse_double("NaN")));
  EXPECT_FALSE(parse_double("12x").has_value());
  EXPECT_FALSE(parse_double("").has_value());
}

TEST(ClientText, Int64Limits) {
  EXPECT_EQ(*parse_int64("-9223372036854775808"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(*parse_int64("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
  EXPECT_FALSE(parse_int64("9223372036854775808").has_value());
  EXPECT_FALSE(parse_int64("1.5").has_value());
  EXPECT_FALSE(parse_int64("").has_value());
}

TEST(ClientText, BigintArrayLiteral) {
  EXPECT_EQ(bigint_array_literal({}), "{}");
  EXPECT_EQ(bigint_array_literal({1, -2, 9223372036854775807}), "{1,-2,9223372036854775807}");
}

TEST(ClientText, DoubleArrays) {
  double out[4] = {-1, -1, -1, -1};
  ASSERT_TRUE(parse_double_array("{1,2.5,Infinity,0}", out, 4));
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 2.5);
  EXPECT_TRUE(std::isinf(out[2]) && out[2] > 0);
  EXPECT_EQ(out[3], 0);
  ASSERT_TRUE(parse_double_array("{-Infinity,NaN,1e+300,0.1}", out, 4));
  EXPECT_TRUE(std::isinf(out[0]) && out[0] < 0);
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_EQ(out[2], 1e300);
  EXPECT_EQ(out[3], 0.1);
  ASSERT_TRUE(parse_double_array("{Infinity}", out, 1));
  EXPECT_TRUE(std::isinf(out[0]));
  // Every number printed by format_double reads back exactly.
  for (double value : {0.1, 123456789.123, 5e-324, 1e-300}) {
    ASSERT_TRUE(parse_double_array("{" + format_double(value) + "}", out, 1));
    EXPECT_EQ(out[0], value);
  }
  EXPECT_TRUE(parse_double_array("{}", out, 0));
  EXPECT_FALSE(parse_double_array("{}", out, 1));
  EXPECT_FALSE(parse_double_array("{1,2}", out, 1));  // too long
  EXPECT_FALSE(parse_double_array("{1,2}", out, 3));  // too short
  EXPECT_FALSE(parse_double_array("{1,}", out, 2));
  EXPECT_FALSE(parse_double_array("{1,NULL}", out, 2));
  EXPECT_FALSE(parse_double_array("{1, 2}", out, 2));
  EXPECT_FALSE(parse_double_array("{{1,2}}", out, 2));
  EXPECT_FALSE(parse_double_array("[0:1]={1,2}", out, 2));
  EXPECT_FALSE(parse_double_array("1,2", out, 2));
  EXPECT_FALSE(parse_double_array("", out, 0));
}

TEST(ClientText, ServerMessageParts) {
  const ServerMessage message = parse_server_message(
      "ERROR:  start_vids of gpu_path is an empty array\nDETAIL:  some detail\n"
      "HINT:  Give at least one vertex id.\nQUERY:  SELECT 1\n");
  EXPECT_EQ(message.primary, "start_vids of gpu_path is an empty array");
  EXPECT_EQ(message.detail, "some detail");
  EXPECT_EQ(message.hint, "Give at least one vertex id.");
  EXPECT_EQ(one_line("a\n  b \n\nc\n"), "a b c");
}

TEST(ClientText, QuotedForJsonAndCsv) {
  EXPECT_EQ(json_string("SELECT id FROM t"), "\"SELECT id FROM t\"");
  EXPECT_EQ(json_string("a\"b\\c\nd\te\x01"), "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
  EXPECT_EQ(json_string("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(csv_field("ny"), "ny");
  EXPECT_EQ(csv_field("SELECT id, cost FROM t"), "\"SELECT id, cost FROM t\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("a\nb"), "\"a\nb\"");
}

}  // namespace
}  // namespace gpu_routing::text

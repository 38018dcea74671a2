#include "writers/json_numbers.h"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <string>

#include "proto/plan.pb.h"
#include "proto/split.pb.h"

namespace autoshard {
namespace {

TEST(NumericJsonTest, Int64FieldsAreNumbersAndStringsStayStrings) {
  proto::Plan plan;
  plan.set_model("50903");  // a string field of digits stays a string
  proto::IpuCost* ipu = plan.add_ipus();
  ipu->mutable_memory()->set_max_tile_bytes(50903);
  ipu->mutable_memory()->set_max_tile(-1);
  ipu->set_flops(2.5);
  std::string json = NumericJson(plan);
  EXPECT_NE(json.find("\"max_tile_bytes\": 50903"), std::string::npos) << json;
  EXPECT_NE(json.find("\"max_tile\": -1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"model\": \"50903\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"flops\": 2.5"), std::string::npos) << json;
  // An int64 default of 0 is printed too, as a number.
  EXPECT_NE(json.find("\"weight_bytes\": 0"), std::string::npos) << json;
  EXPECT_EQ(json.find("\"weight_bytes\": \"0\""), std::string::npos) << json;
}

TEST(NumericJsonTest, BytesAbove2To53StayExactIntegersInTheText) {
  proto::Plan plan;
  // 2^53 + 1 = 9007199254740993: a double would round it, the text does not.
  plan.add_ipus()->mutable_memory()->set_total_bytes(9007199254740993);
  EXPECT_NE(NumericJson(plan).find("\"total_bytes\": 9007199254740993"),
            std::string::npos);
}

TEST(NumericJsonTest, ManifestDimsAreNumbersWhereStaticAndReadBack) {
  proto::SplitManifest m;
  m.set_format("autoshard-split");
  proto::SplitTensor* t = m.add_inputs();
  t->set_name("input");
  t->add_dims("batch");
  t->add_dims("3");
  t->add_dims("224");
  std::string json = NumericJson(m);
  EXPECT_NE(json.find("\"batch\",\n    3,\n    224\n"), std::string::npos)
      << json;
  // Protobuf's parser refuses a number in a string field; quoted again, the
  // text reads back to the same message.
  proto::SplitManifest back;
  EXPECT_FALSE(google::protobuf::util::JsonStringToMessage(json, &back).ok());
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  QuoteNumbersInStringFields(json, *m.GetDescriptor()), &back)
                  .ok());
  EXPECT_EQ(back.SerializeAsString(), m.SerializeAsString());
}

TEST(NumericJsonTest, TextThatIsNotJsonComesBackUnchanged) {
  EXPECT_EQ(QuoteNumbersInStringFields("{\"inputs\": [",
                                       *proto::SplitManifest::descriptor()),
            "{\"inputs\": [");
  // Text that ends inside a key (a truncated manifest.json in a --split-dir)
  // threw std::out_of_range and aborted autoshard.
  EXPECT_EQ(QuoteNumbersInStringFields("{\"format",
                                       *proto::SplitManifest::descriptor()),
            "{\"format");
  EXPECT_EQ(QuoteNumbersInStringFields("{\"sources\": {\"a",
                                       *proto::SplitManifest::descriptor()),
            "{\"sources\": {\"a");
}

// The whole kind: text that ends inside a value, arrays no field describes
// (an unknown key's: autoshard spun forever on it), nesting deeper than 100.
TEST(NumericJsonTest, HostileManifestsComeBackUnchangedOrRewritten) {
  const auto& manifest = *proto::SplitManifest::descriptor();
  EXPECT_EQ(QuoteNumbersInStringFields("{\"format\": \"ab", manifest),
            "{\"format\": \"ab");
  EXPECT_EQ(QuoteNumbersInStringFields("{\"format\": \"a\\", manifest),
            "{\"format\": \"a\\");
  // An unknown key's array, nested too, is copied as it is: valid JSON.
  EXPECT_EQ(
      QuoteNumbersInStringFields("{\"foo\": [1, [2, \"x\"], {}]}", manifest),
      "{\"foo\": [1, [2, \"x\"], {}]}");
  // 100 nested arrays are read; 101 are refused (the text comes back).
  const std::string ok =
      "{\"foo\": " + std::string(99, '[') + std::string(99, ']') + "}";
  EXPECT_EQ(QuoteNumbersInStringFields(ok, manifest), ok);
  const std::string deep = "{\"foo\": " + std::string(200000, '[');
  EXPECT_EQ(QuoteNumbersInStringFields(deep, manifest), deep);
}

}  // namespace
}  // namespace autoshard

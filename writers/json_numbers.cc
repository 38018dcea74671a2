#include "writers/json_numbers.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <string>
#include <string_view>

namespace autoshard {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// Note [Rewriting protobuf's JSON by schema]
// The rewriter walks JSON text and the message's descriptor together: an
// object's key names a field of the current descriptor, and the field's type
// says whether a string token "123" should become 123 (to_numbers) or a
// number token 123 should become "123" (the way back, for the parser). Only
// those tokens change; whitespace and every other token are copied, so the
// output keeps protobuf's layout. Keys that name no field (and the insides
// of well-known types) are copied as they are.
class Rewriter {
 public:
  Rewriter(std::string_view in, bool to_numbers)
      : in_(in), to_numbers_(to_numbers) {}

  // The rewritten text, or the input when it is not a JSON object.
  std::string Run(const Descriptor* d) {
    Space();
    Object(d);
    Space();
    if (!ok_ || pos_ != in_.size()) return std::string(in_);
    return out_;
  }

 private:
  char Peek() const { return pos_ < in_.size() ? in_[pos_] : '\0'; }

  void Space() {
    while (pos_ < in_.size() &&
           std::isspace(static_cast<unsigned char>(in_[pos_])))
      out_ += in_[pos_++];
  }

  void Expect(char c) {
    if (Peek() != c) {
      ok_ = false;
      return;
    }
    out_ += in_[pos_++];
  }

  // A string token with its quotes, escapes kept.
  std::string_view StringToken() {
    size_t start = pos_++;
    while (pos_ < in_.size() && in_[pos_] != '"')
      pos_ += in_[pos_] == '\\' ? 2 : 1;
    if (pos_ >= in_.size()) {
      ok_ = false;
      return {};
    }
    ++pos_;
    return in_.substr(start, pos_ - start);
  }

  // A number or literal (true, false, null).
  std::string_view BareToken() {
    size_t start = pos_;
    constexpr std::string_view kEnd = ",]} \t\r\n";
    while (pos_ < in_.size() && kEnd.find(in_[pos_]) == std::string_view::npos)
      ++pos_;
    if (pos_ == start) ok_ = false;
    return in_.substr(start, pos_ - start);
  }

  // Comma-separated items between `open` and `close` ('{' '}' or '[' ']'),
  // whitespace copied; `item()` reads each.
  // Deeper than kMaxDepth is refused (ok_ false) before the stack runs out,
  // like protobuf's own JSON parser (its limit is 100).
  template <typename Item>
  void Items(char open, char close, const Item& item) {
    if (++depth_ > kMaxDepth) return void(ok_ = false);
    Expect(open);
    Space();
    if (Peek() == close) {
      Expect(close);
    } else {
      while (ok_) {
        item();
        Space();
        if (Peek() != ',') {
          Expect(close);
          break;
        }
        Expect(',');
        Space();
      }
    }
    --depth_;
  }

  // An object's members: each key is copied, then `value(key)` (the key
  // without its quotes) reads the member's value.
  template <typename Value>
  void Members(const Value& value) {
    Items('{', '}', [&] {
      if (Peek() != '"') return void(ok_ = false);
      const std::string_view key = StringToken();
      if (!ok_) return;  // the text ends inside the key
      out_ += key;
      Space();
      Expect(':');
      Space();
      value(key.substr(1, key.size() - 2));
    });
  }

  void Object(const Descriptor* d) {
    Members([&](std::string_view key) { Field(FindField(d, key)); });
  }

  static const FieldDescriptor* FindField(const Descriptor* d,
                                          std::string_view key) {
    if (d == nullptr) return nullptr;
    std::string name(key);
    const FieldDescriptor* f = d->FindFieldByName(name);
    return f != nullptr ? f : d->FindFieldByCamelcaseName(name);
  }

  void Field(const FieldDescriptor* f) {
    if (f != nullptr && f->is_map() && Peek() == '{') {
      // A map's object: keys stay strings, values follow the value field.
      const FieldDescriptor* value = f->message_type()->map_value();
      return Members([&](std::string_view) { Value(value); });
    }
    if (f != nullptr && f->is_repeated() && Peek() == '[') {
      return Items('[', ']', [&] { Value(f); });
    }
    Value(f);
  }

  // One value of field `f` (nullptr: a value no field describes).
  void Value(const FieldDescriptor* f) {
    char c = Peek();
    if (c == '{') {
      const Descriptor* d = f != nullptr ? f->message_type() : nullptr;
      if (d != nullptr && d->file()->name().starts_with("google/protobuf/"))
        d = nullptr;
      return Object(d);
    }
    // An array no repeated field describes (an unknown key's, or nested):
    // its values copied. (Field(nullptr) here came back to this line without
    // reading a character: autoshard spun forever on {"foo": [1]}.)
    if (c == '[') return Items('[', ']', [&] { Value(nullptr); });
    if (c == '"') {
      std::string_view token = StringToken();
      if (!ok_) return;  // the text ends inside the string
      std::string_view text = token.substr(1, token.size() - 2);
      out_ += to_numbers_ && Numeric(f) && IsInteger(text) ? text : token;
      return;
    }
    std::string_view token = BareToken();
    bool quote = !to_numbers_ && f != nullptr &&
                 f->type() == FieldDescriptor::TYPE_STRING && token != "null";
    if (quote) out_ += '"';
    out_ += token;
    if (quote) out_ += '"';
  }

  // True for a field whose integer strings become numbers.
  static bool Numeric(const FieldDescriptor* f) {
    if (f == nullptr) return false;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT64:
      case FieldDescriptor::CPPTYPE_UINT64:
        return true;
      case FieldDescriptor::CPPTYPE_STRING:
        return f->type() == FieldDescriptor::TYPE_STRING && f->is_repeated() &&
               f->name() == "dims";
      default:
        return false;
    }
  }

  // An optional '-' and 1 to 20 digits, no leading zero unless "0".
  static bool IsInteger(std::string_view s) {
    if (s.starts_with('-')) s.remove_prefix(1);
    if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0'))
      return false;
    for (char c : s)
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
  }

  std::string_view in_;
  bool to_numbers_;
  size_t pos_ = 0;
  bool ok_ = true;
  static constexpr int kMaxDepth = 100;
  int depth_ = 0;  // arrays and objects open at pos_
  std::string out_;
};

}  // namespace

std::string NumericJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return Rewriter(json, /*to_numbers=*/true).Run(message.GetDescriptor());
}

std::string QuoteNumbersInStringFields(absl::string_view json,
                                       const Descriptor& descriptor) {
  return Rewriter(std::string_view(json.data(), json.size()),
                  /*to_numbers=*/false)
      .Run(&descriptor);
}

}  // namespace autoshard

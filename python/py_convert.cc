#include "python/py_convert.h"

#include <string>

#include "google/protobuf/descriptor.h"

namespace autoshard::python {
namespace py = pybind11;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

namespace {

// Field `f` of `m`: element `i` of a repeated field, or the value when i < 0.
py::object FieldValue(const Message& m, const FieldDescriptor* f, int i) {
  const Reflection* r = m.GetReflection();
  const bool rep = i >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return py::int_(rep ? r->GetRepeatedInt32(m, f, i) : r->GetInt32(m, f));
    case FieldDescriptor::CPPTYPE_INT64:
      return py::int_(rep ? r->GetRepeatedInt64(m, f, i) : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return py::int_(rep ? r->GetRepeatedUInt32(m, f, i) : r->GetUInt32(m, f));
    case FieldDescriptor::CPPTYPE_UINT64:
      return py::int_(rep ? r->GetRepeatedUInt64(m, f, i) : r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return py::float_(rep ? r->GetRepeatedDouble(m, f, i)
                            : r->GetDouble(m, f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return py::float_(rep ? r->GetRepeatedFloat(m, f, i) : r->GetFloat(m, f));
    case FieldDescriptor::CPPTYPE_BOOL:
      return py::bool_(rep ? r->GetRepeatedBool(m, f, i) : r->GetBool(m, f));
    case FieldDescriptor::CPPTYPE_ENUM:
      return py::str(
          (rep ? r->GetRepeatedEnum(m, f, i) : r->GetEnum(m, f))->name());
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string s =
          rep ? r->GetRepeatedString(m, f, i) : r->GetString(m, f);
      if (f->type() == FieldDescriptor::TYPE_BYTES) return py::bytes(s);
      return py::str(s);
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return MessageToDict(rep ? r->GetRepeatedMessage(m, f, i)
                               : r->GetMessage(m, f));
  }
  return py::none();
}

}  // namespace

void RaiseStatus(const absl::Status& status) {
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      throw py::value_error(message);
    case absl::StatusCode::kNotFound:
      PyErr_SetString(PyExc_FileNotFoundError, message.c_str());
      throw py::error_already_set();
    case absl::StatusCode::kPermissionDenied:
      PyErr_SetString(PyExc_PermissionError, message.c_str());
      throw py::error_already_set();
    default:
      throw std::runtime_error(message);
  }
}

py::dict MessageToDict(const Message& message) {
  py::dict out;
  const Reflection* r = message.GetReflection();
  const auto* descriptor = message.GetDescriptor();
  for (int k = 0; k < descriptor->field_count(); ++k) {
    const FieldDescriptor* f = descriptor->field(k);
    if (f->is_repeated()) {
      py::list values;
      for (int i = 0; i < r->FieldSize(message, f); ++i) {
        values.append(FieldValue(message, f, i));
      }
      out[py::str(f->name())] = values;
    } else if (f->has_presence() && !r->HasField(message, f)) {
      out[py::str(f->name())] = py::none();
    } else {
      out[py::str(f->name())] = FieldValue(message, f, -1);
    }
  }
  return out;
}

}  // namespace autoshard::python

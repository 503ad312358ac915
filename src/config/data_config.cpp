#include "config/data_config.h"

namespace hwt {

std::string_view format_name(DataFormat f) {
  switch (f) {
    case DataFormat::Spam:
      return "spam";
    case DataFormat::JointBert:
      return "jointbert";
    case DataFormat::Tsv:
      return "tsv";
    case DataFormat::Csv:
      return "csv";
    case DataFormat::Jsonl:
      return "jsonl";
    case DataFormat::Text:
      return "text";
    case DataFormat::Sotu:
      return "sotu";
  }
  return "?";
}

bool is_lm_format(DataFormat f) {
  return f == DataFormat::Text || f == DataFormat::Sotu;
}

}  // namespace hwt

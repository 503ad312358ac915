// Reading data files as text, with errors that name the file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hwt {

// The whole file (core's read_file, errors naming the data file) without a UTF-8 byte order
// mark.
std::string read_text_file(const std::string& path);

// Lines without their "\n" / "\r\n"; a final newline does not start an empty last line.
std::vector<std::string_view> split_lines(std::string_view text);

// Pieces of `line` between runs of ASCII whitespace.
std::vector<std::string_view> split_whitespace(std::string_view line);

// InputError unless `path` is an existing folder; `what` says what it should hold.
void require_folder(const std::string& path, std::string_view what);

// A data file's path as a checkpoint can find it again from another folder: absolute, and a
// relative path that does not exist here looked up among the files shipped with hwt.
std::string absolute_data_path(const std::string& path);

// Length of the valid UTF-8 sequence of two to four bytes starting at s[i]; 0 for an ASCII byte
// or where no valid sequence starts.
size_t utf8_length(std::string_view s, size_t i);

// Makes arbitrary bytes valid UTF-8: valid sequences pass through and any other byte is read
// as Latin-1. Vocabularies and label names end up in JSON, which must be valid UTF-8.
std::string to_valid_utf8(std::string_view s);

}  // namespace hwt

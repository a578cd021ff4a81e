#include "benchmarks/json.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "absl/strings/str_format.h"

namespace bench {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20)
          out += absl::StrFormat("\\u%04x", c);
        else
          out += static_cast<char>(c);
    }
  }
  out += '"';
  return out;
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  return absl::StrFormat("%.6g", v);
}

namespace {

class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  void Ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
      ++i_;
  }
  bool Eat(char c) {
    Ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    Ws();
    return i_ < s_.size() && s_[i_] == c;
  }
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    out->clear();
    while (i_ < s_.size()) {
      char c = s_[i_++];
      if (c == '"') return true;
      if (c == '\\') {
        if (i_ >= s_.size()) return false;
        char e = s_[i_++];
        switch (e) {
          case 'n':
            *out += '\n';
            break;
          case 't':
            *out += '\t';
            break;
          case 'r':
            *out += '\r';
            break;
          case 'u': {
            if (i_ + 4 > s_.size()) return false;
            long v = std::strtol(s_.substr(i_, 4).c_str(), nullptr, 16);
            i_ += 4;
            *out += v < 0x80 ? static_cast<char>(v) : '?';
            break;
          }
          default:
            *out += e;
        }
      } else {
        *out += c;
      }
    }
    return false;
  }
  bool Number(double* out) {
    Ws();
    const char* start = s_.c_str() + i_;
    char* end = nullptr;
    *out = std::strtod(start, &end);
    if (end == start) return false;
    i_ += static_cast<size_t>(end - start);
    return true;
  }
  bool Word(const char* w) {
    Ws();
    size_t n = std::char_traits<char>::length(w);
    if (s_.compare(i_, n, w) == 0) {
      i_ += n;
      return true;
    }
    return false;
  }
  bool AtEnd() {
    Ws();
    return i_ == s_.size();
  }

 private:
  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace

bool ParseFlatObject(const std::string& line,
                     std::map<std::string, JsonValue>* out) {
  Reader r(line);
  out->clear();
  if (!r.Eat('{')) return false;
  if (r.Eat('}')) return r.AtEnd();
  for (;;) {
    std::string key;
    if (!r.String(&key) || !r.Eat(':')) return false;
    JsonValue v;
    if (r.Peek('"')) {
      v.kind = JsonValue::kString;
      if (!r.String(&v.str)) return false;
    } else if (r.Eat('[')) {
      v.kind = JsonValue::kNumberArray;
      if (!r.Eat(']')) {
        for (;;) {
          double d;
          if (!r.Number(&d)) return false;
          v.arr.push_back(d);
          if (r.Eat(']')) break;
          if (!r.Eat(',')) return false;
        }
      }
    } else if (r.Word("true")) {
      v.kind = JsonValue::kBool;
      v.b = true;
    } else if (r.Word("false")) {
      v.kind = JsonValue::kBool;
    } else if (r.Word("null")) {
      v.kind = JsonValue::kNull;
    } else {
      v.kind = JsonValue::kNumber;
      if (!r.Number(&v.num)) return false;
    }
    (*out)[key] = v;
    if (r.Eat('}')) return r.AtEnd();
    if (!r.Eat(',')) return false;
  }
}

}  // namespace bench

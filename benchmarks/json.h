// Just enough JSON for //benchmarks:all: escaping strings, and reading the
// flat one-object-per-line records the children print.
#ifndef PMR_BENCHMARKS_JSON_H_
#define PMR_BENCHMARKS_JSON_H_

#include <map>
#include <string>
#include <vector>

namespace bench {

// s as a JSON string literal, quotes included.
std::string JsonString(const std::string& s);
// A finite double as a JSON number ("null" when not finite).
std::string JsonNumber(double v);

struct JsonValue {
  enum Kind { kNull, kBool, kNumber, kString, kNumberArray } kind = kNull;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<double> arr;
};

// Parses one flat object: values are strings, numbers, booleans, null or
// arrays of numbers. Returns false on anything else.
bool ParseFlatObject(const std::string& line,
                     std::map<std::string, JsonValue>* out);

}  // namespace bench

#endif  // PMR_BENCHMARKS_JSON_H_

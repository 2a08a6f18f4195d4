#pragma once

#include <string_view>
#include <vector>

#include "metrics_adapter/logging/log_options.h"

namespace metrics_adapter::logging {

// True when `name` matches the glob `pattern` as Go's path.Match reads it: '*' (any run of
// characters but '/'), '?' (one character but '/'), [abc], [a-z], [^a-z], '\' escapes. A
// malformed pattern matches nothing.
bool logGlobMatch(std::string_view pattern, std::string_view name);

// False for a pattern Go's path.Match rejects (an unclosed or empty [], a trailing '\').
bool isValidLogGlob(std::string_view pattern);

// --v and --vmodule together: the verbosity a message from a given source file is logged up to.
// Immutable after construction, so safe to share between threads.
class VmoduleMatcher {
 public:
  VmoduleMatcher(int verbosity, std::vector<VmoduleRule> rules);

  // `source_file` as __FILE__ spells it (any directories, any extension): the first rule that
  // matches it (see VmoduleRule), or --v when that is higher or no rule matches.
  int verbosityFor(std::string_view source_file) const;

  // --v: what a message that does not know its source file is logged up to.
  int baseVerbosity() const { return verbosity_; }

  // The same rules under another --v.
  VmoduleMatcher withVerbosity(int verbosity) const { return VmoduleMatcher(verbosity, rules_); }

  // The highest verbosity any file can get: the logger's level must let these messages through.
  int mostVerbose() const;

 private:
  int verbosity_;
  std::vector<VmoduleRule> rules_;
};

}  // namespace metrics_adapter::logging

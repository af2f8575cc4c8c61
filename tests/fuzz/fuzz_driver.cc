// Deterministic mutation-fuzz driver for the LLVMFuzzerTestOneInput targets of tests/fuzz, for
// builds without libFuzzer (g++, the default and --sanitize builds): every seed file is run as
// is, then mutated copies (bit flips, interesting bytes and tokens, deletions, duplications,
// splices of two seeds) until --iterations inputs or --seconds of wall time, whichever comes
// first. The same seed gives the same inputs. A target reports a bug by aborting (or through
// ASan/UBSan in the sanitize build); the input is then written to --crash-file first.
//   <target> [--iterations N] [--seconds S] [--seed K] [--max-len B] [--crash-file F] PATH...
// PATH: seed files or directories of them.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Present when linked with a sanitizer runtime: called before a sanitizer report ends the process.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace {

std::string g_current;       // the input being run, saved when the target aborts
std::string g_crash_file = "fuzz-crash.bin";

void SaveInput() {
  if (FILE* f = std::fopen(g_crash_file.c_str(), "wb")) {
    std::fwrite(g_current.data(), 1, g_current.size(), f);
    std::fclose(f);
  }
  std::fprintf(stderr, "fuzz: failing input of %zu bytes saved to %s\n", g_current.size(),
               g_crash_file.c_str());
}

void SaveCurrent(int sig) {
  SaveInput();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

struct Rng {  // splitmix64: deterministic across platforms
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }
};

// Bytes and tokens that tend to reach edge cases of JSON, CSV and key=value parsers.
const char kBytes[] = "{}[]\",:=()-+.eE0129 \t\n\r\\/x\x00\x7f\x80\xc3\xa9\xff";
const char* const kTokens[] = {
    "1e400", "-1", "0", "-0", "1e-300", "2147483647", "2147483648", "4294967296",
    "9223372036854775807", "9223372036854775808", "18446744073709551616", "NaN", "Infinity",
    "inf", "nan", "0x10", "1.5", "null", "true", "\"\"", "[]", "{}", ",,", "==", "\xc3\x28",
    "\xed\xa0\x80", "\"\\ud800\"", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    "pp=", "tp=", "dp=", "ep=", "batch=", "ttft_ms=", "tpot_ms=", "(", ")", "rl(", "ga(", "sa(",
    "65536", "16777216", "16777217", "1073741824", "\"num_gpus\":", "\"gpu\":", "\"hidden_size\":",
    "\"num_hidden_layers\":", "\"num_attention_heads\":", "\"model_type\":"};

void Mutate(std::string* s, const std::vector<std::string>& seeds, Rng& rng, size_t max_len) {
  const int rounds = 1 + static_cast<int>(rng.Below(4));
  for (int r = 0; r < rounds; ++r) {
    const size_t n = s->size();
    switch (rng.Below(8)) {
      case 0:  // flip a bit
        if (n) (*s)[rng.Below(n)] ^= static_cast<char>(1u << rng.Below(8));
        break;
      case 1:  // set an interesting byte
        if (n) (*s)[rng.Below(n)] = kBytes[rng.Below(sizeof kBytes - 1)];
        break;
      case 2:  // insert an interesting byte
        s->insert(s->begin() + static_cast<std::ptrdiff_t>(rng.Below(n + 1)),
                  kBytes[rng.Below(sizeof kBytes - 1)]);
        break;
      case 3: {  // insert a token
        const char* t = kTokens[rng.Below(std::size(kTokens))];
        s->insert(rng.Below(n + 1), t);
        break;
      }
      case 4: {  // replace a number-ish run with a token
        if (!n) break;
        size_t a = rng.Below(n), b = a;
        while (b < n && std::strchr("0123456789.eE+-", (*s)[b]) && (*s)[b] != '\0') ++b;
        s->replace(a, b - a, kTokens[rng.Below(std::size(kTokens))]);
        break;
      }
      case 5:  // delete a range
        if (n) {
          const size_t a = rng.Below(n);
          s->erase(a, 1 + rng.Below(std::min<size_t>(n - a, 64)));
        }
        break;
      case 6:  // duplicate a range
        if (n) {
          const size_t a = rng.Below(n), len = 1 + rng.Below(std::min<size_t>(n - a, 64));
          s->insert(rng.Below(n + 1), s->substr(a, len));
        }
        break;
      default: {  // splice with another seed
        const std::string& o = seeds[rng.Below(seeds.size())];
        if (o.empty()) break;
        const size_t a = rng.Below(n + 1), b = rng.Below(o.size());
        *s = s->substr(0, a) + o.substr(b);
        break;
      }
    }
    if (s->size() > max_len) s->resize(max_len);
  }
}

void AddSeed(const std::filesystem::path& p, std::vector<std::string>* seeds) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  seeds->push_back(ss.str());
}

int Run(const std::string& input) {
  g_current = input;
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

}  // namespace

int main(int argc, char** argv) {
  long long iterations = 10000;
  double seconds = 60;
  uint64_t seed = 1;
  size_t max_len = 1 << 16;
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fuzz: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--iterations") iterations = std::atoll(value().c_str());
    else if (a == "--seconds") seconds = std::atof(value().c_str());
    else if (a == "--seed") seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--max-len") max_len = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--crash-file") g_crash_file = value();
    else if (std::filesystem::is_directory(a)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(a))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());  // deterministic order
      for (const auto& f : files) AddSeed(f, &seeds);
    } else if (std::filesystem::is_regular_file(a)) {
      AddSeed(a, &seeds);
    } else {
      std::fprintf(stderr, "fuzz: no such seed file or directory: %s\n", a.c_str());
      return 2;
    }
  }
  if (seeds.empty()) seeds.push_back("");
  // Under ASan/UBSan the sanitizer reports crashes itself (with a stack): keep its handlers and
  // save the input from its death callback; without one, save it from the signal handlers.
  if (__sanitizer_set_death_callback != nullptr) {
    __sanitizer_set_death_callback(SaveInput);
    std::signal(SIGABRT, SaveCurrent);
  } else {
    for (int sig : {SIGABRT, SIGSEGV, SIGFPE, SIGBUS, SIGILL}) std::signal(sig, SaveCurrent);
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (const std::string& s : seeds) Run(s);
  Rng rng{seed};
  long long runs = 0;
  for (; runs < iterations; ++runs) {
    if ((runs & 63) == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds)
      break;
    std::string input = seeds[rng.Below(seeds.size())];
    Mutate(&input, seeds, rng, max_len);
    Run(input);
  }
  std::fprintf(stderr, "fuzz: %zu seeds and %lld mutated inputs in %.1f s, no failure\n",
               seeds.size(), runs,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}

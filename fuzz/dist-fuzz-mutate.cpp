//===- dist-fuzz-mutate.cpp - how parseable the mutator's output is -------===//
//
// Applies the fuzz target's structure-aware mutations (DistMutator.h) to the
// given MLIR files and counts how many mutants still parse and verify: the
// measure of "keeps inputs mostly parseable".
//
//   dist-fuzz-mutate [-n N] [-seed S] [-out DIR] FILE...
//
// N mutants per file that verifies (default 50), each from the file itself
// with 1 to 4 edits; -out writes them (for a look, or to seed a corpus).
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistDialect.h"
#include "Dist/Support/InputGuard.h"
#include "DistMutator.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <random>

using namespace mlir;

static llvm::cl::list<std::string> inputs(llvm::cl::Positional,
                                          llvm::cl::desc("<mlir files>"));
static llvm::cl::opt<unsigned> count("n", llvm::cl::desc("mutants per file"),
                                     llvm::cl::init(50));
static llvm::cl::opt<unsigned> seed("seed", llvm::cl::desc("random seed"),
                                    llvm::cl::init(1));
static llvm::cl::opt<std::string> outDir("out",
                                         llvm::cl::desc("write mutants here"));

int main(int argc, char **argv) {
  llvm::cl::ParseCommandLineOptions(argc, argv, "dist fuzz mutator check\n");
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<dist::DistDialect>();
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.getDiagEngine().registerHandler([](Diagnostic &) {});

  std::mt19937_64 rng(seed);
  // Counts over the mutants of the files that verify (the others, lit's
  // negative cases, rarely start verifying).
  unsigned total = 0, changed = 0, parsed = 0, verified = 0, seedsVerified = 0;
  for (const std::string &file : inputs) {
    auto buffer = llvm::MemoryBuffer::getFile(file);
    if (!buffer) {
      llvm::errs() << file << ": cannot read\n";
      return 1;
    }
    std::string original = (*buffer)->getBuffer().str();
    auto check = [&](const std::string &text, bool &ok) {
      ok = false;
      if (dist::findExcessiveNesting(text, dist::kDefaultMaxNesting) ||
          dist::findParserCrash(text))
        return false;
      OwningOpRef<ModuleOp> module =
          parseSourceString<ModuleOp>(text, ParserConfig(&context, false));
      if (!module)
        return false;
      ok = succeeded(verify(*module));
      return true;
    };
    bool ok = false;
    check(original, ok);
    if (!ok)
      continue;
    ++seedsVerified;
    for (unsigned i = 0; i < count; ++i) {
      std::string text = original;
      ++total;
      if (!dist_fuzz::mutateModuleText(text, rng))
        continue;
      ++changed;
      if (!outDir.empty()) {
        llvm::SmallString<256> path(outDir);
        llvm::sys::path::append(path, llvm::sys::path::stem(file) + "-" +
                                          std::to_string(i) + ".mlir");
        std::error_code ec;
        llvm::raw_fd_ostream os(path, ec);
        if (!ec)
          os << text;
      }
      // After writing: a mutant that crashes the verifier is on disk.
      parsed += check(text, ok);
      verified += ok;
    }
  }
  llvm::outs() << inputs.size() << " files, " << seedsVerified
               << " verify; their " << total << " mutants: " << changed
               << " changed, " << parsed << " parse, " << verified
               << " verify\n";
  return 0;
}

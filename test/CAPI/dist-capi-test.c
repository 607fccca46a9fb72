//===- dist-capi-test.c - the no_sync pipeline from C ---------------------===//
//
// Drives dist through its C API alone (the Dist-c and mlir-c headers), as a
// C, Rust or Python-ctypes host would: a context with the upstream dialects
// and dist, a step parsed from a file, a textual pass pipeline, the module
// printed to stdout. Run by test/CAPI/dist-capi.test.
//
//   dist-capi-test [--pipeline=TEXT | --no-sync-options=OPTIONS] FILE
//
// --pipeline (default "builtin.module(dist-no-sync-pipeline)") goes through
// mlirParsePassPipeline, which finds dist's passes and pipelines once
// mlirDistRegisterAllPasses registered them; --no-sync-options runs
// mlirDistRunNoSyncPipeline instead. Diagnostics arrive through a handler
// attached to the context and go to stderr; any failure exits with 1.
//
//===----------------------------------------------------------------------===//

#include "Dist-c/Dialect.h"
#include "Dist-c/Passes.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kDefaultPipeline =
    "builtin.module(dist-no-sync-pipeline)";

static void printToFile(MlirStringRef text, void *userData) {
  fwrite(text.data, 1, text.length, (FILE *)userData);
}

/* Prints "FILE:LINE:COL: error: MESSAGE" (or warning, note, remark). */
static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  static const char *const kSeverity[] = {"error", "warning", "note", "remark"};
  MlirDiagnosticSeverity severity = mlirDiagnosticGetSeverity(diagnostic);
  int *errors = (int *)userData;
  if (severity == MlirDiagnosticError)
    ++*errors;
  MlirLocation location = mlirDiagnosticGetLocation(diagnostic);
  if (mlirLocationIsAFileLineColRange(location)) {
    MlirIdentifier file = mlirLocationFileLineColRangeGetFilename(location);
    printToFile(mlirIdentifierStr(file), stderr);
    fprintf(stderr, ":%d:%d",
            mlirLocationFileLineColRangeGetStartLine(location),
            mlirLocationFileLineColRangeGetStartColumn(location));
  } else {
    mlirLocationPrint(location, printToFile, stderr);
  }
  fprintf(stderr, ": %s: ", kSeverity[severity]);
  mlirDiagnosticPrint(diagnostic, printToFile, stderr);
  fputc('\n', stderr);
  for (intptr_t i = 0, e = mlirDiagnosticGetNumNotes(diagnostic); i < e; ++i)
    printDiagnostic(mlirDiagnosticGetNote(diagnostic, i), userData);
  return mlirLogicalResultSuccess(); /* handled */
}

/* The whole file, NUL-terminated, or NULL with a message. */
static char *readFile(const char *path, size_t *length) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "dist-capi-test: cannot open '%s'\n", path);
    return NULL;
  }
  size_t capacity = 1 << 16, size = 0, got;
  char *text = malloc(capacity + 1);
  while (text && (got = fread(text + size, 1, capacity - size, file)) > 0) {
    size += got;
    if (size == capacity) {
      char *grown = realloc(text, 2 * capacity + 1);
      if (!grown)
        free(text);
      text = grown;
      capacity *= 2;
    }
  }
  int failed = !text || ferror(file);
  fclose(file);
  if (failed) {
    fprintf(stderr, "dist-capi-test: cannot read '%s'\n", path);
    free(text);
    return NULL;
  }
  text[size] = '\0';
  *length = size;
  return text;
}

/* mlirDistAddNoSyncPipeline refuses a pass manager that does not run on
 * builtin.module (OpPassManager::addPass would abort the process). */
static int checkAnchorRefused(MlirContext context) {
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirOpPassManager nested = mlirPassManagerGetNestedUnder(
      pm, mlirStringRefCreateFromCString("func.func"));
  FILE *sink = tmpfile();
  MlirLogicalResult added = mlirDistAddNoSyncPipeline(
      nested, mlirStringRefCreate(NULL, 0), printToFile, sink ? sink : stderr);
  long written = sink ? ftell(sink) : 1;
  if (sink)
    fclose(sink);
  mlirPassManagerDestroy(pm);
  if (mlirLogicalResultIsSuccess(added) || written <= 0) {
    fprintf(stderr, "dist-capi-test: mlirDistAddNoSyncPipeline accepted a "
                    "func.func pass manager or gave no message\n");
    return 0;
  }
  return 1;
}

static void appendToBuffer(MlirStringRef text, void *userData);

/* A null module (a refused parse) or pass manager is refused with a
 * message, not dereferenced. */
static int checkNullRefused(void) {
  char message[256] = "";
  MlirModule none = {NULL};
  MlirOpPassManager noPm = {NULL};
  int refused =
      mlirLogicalResultIsFailure(mlirDistRunNoSyncPipeline(
          none, mlirStringRefCreate(NULL, 0), appendToBuffer, message)) &&
      strstr(message, "the module is null");
  message[0] = '\0';
  refused = refused &&
            mlirLogicalResultIsFailure(mlirDistAddNoSyncPipeline(
                noPm, mlirStringRefCreate(NULL, 0), appendToBuffer, message)) &&
            strstr(message, "the pass manager is null");
  if (!refused)
    fprintf(stderr, "dist-capi-test: a null module or pass manager was not "
                    "refused with a message ('%s')\n",
            message);
  return refused;
}

static void appendToBuffer(MlirStringRef text, void *userData) {
  char *buffer = (char *)userData;
  size_t used = strlen(buffer), room = 255 - used;
  size_t n = text.length < room ? text.length : room;
  memcpy(buffer + used, text.data, n);
  buffer[used + n] = '\0';
}

/* A pass from the generated mlirCreateDist<Def>() in a pass manager. */
static int checkGeneratedCreate(MlirContext context) {
  MlirPassManager pm = mlirPassManagerCreate(context);
  mlirPassManagerAddOwnedPass(pm, mlirCreateDistDistExpandSynchronizePass());
  char printed[256] = "";
  mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(pm), appendToBuffer,
                        printed);
  mlirPassManagerDestroy(pm);
  if (!strstr(printed, "dist-expand-synchronize")) {
    fprintf(stderr,
            "dist-capi-test: mlirCreateDistDistExpandSynchronizePass "
            "gave the pipeline '%s'\n",
            printed);
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  const char *pipeline = kDefaultPipeline, *options = NULL, *path = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--pipeline=", 11) == 0)
      pipeline = argv[i] + 11;
    else if (strncmp(argv[i], "--no-sync-options=", 18) == 0)
      options = argv[i] + 18;
    else if (argv[i][0] != '-' && !path)
      path = argv[i];
    else {
      fprintf(stderr, "dist-capi-test: unexpected argument '%s'\n", argv[i]);
      return 1;
    }
  }
  if (!path) {
    fprintf(stderr, "usage: dist-capi-test [--pipeline=TEXT | "
                    "--no-sync-options=OPTIONS] FILE\n");
    return 1;
  }

  MlirContext context = mlirContextCreate();
  int errors = 0;
  mlirContextAttachDiagnosticHandler(context, printDiagnostic, &errors, NULL);

  /* Upstream's dialects and extensions, and dist. */
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__dist__(), registry);
  mlirContextAppendDialectRegistry(context, registry);
  mlirDialectRegistryDestroy(registry);
  MlirDialect dist =
      mlirDialectHandleLoadDialect(mlirGetDialectHandle__dist__(), context);
  if (mlirDialectIsNull(dist)) {
    fprintf(stderr, "dist-capi-test: cannot load the dist dialect\n");
    mlirContextDestroy(context);
    return 1;
  }
  mlirRegisterAllPasses();
  mlirDistRegisterAllPasses();

  int status = 1;
  MlirPassManager pm = {NULL};
  MlirModule module = {NULL};
  size_t length = 0;
  char *source = readFile(path, &length);
  if (!source)
    goto done;
  module =
      mlirDistModuleCreateParse(context, mlirStringRefCreate(source, length),
                                mlirStringRefCreateFromCString(path));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "dist-capi-test: cannot parse '%s'\n", path);
    goto done;
  }
  MlirOperation op = mlirModuleGetOperation(module);

  if (!checkAnchorRefused(context) || !checkGeneratedCreate(context) ||
      !checkNullRefused())
    goto done;

  if (options) {
    printf("// mlirDistRunNoSyncPipeline(\"%s\")\n", options);
    if (mlirLogicalResultIsFailure(mlirDistRunNoSyncPipeline(
            module, mlirStringRefCreateFromCString(options), printToFile,
            stderr))) {
      fprintf(stderr, "dist-capi-test: the no_sync pipeline failed\n");
      goto done;
    }
  } else {
    pm = mlirPassManagerCreate(context);
    if (mlirLogicalResultIsFailure(mlirParsePassPipeline(
            mlirPassManagerGetAsOpPassManager(pm),
            mlirStringRefCreateFromCString(pipeline), printToFile, stderr))) {
      fprintf(stderr, "\ndist-capi-test: invalid pass pipeline '%s'\n",
              pipeline);
      goto done;
    }
    /* The named pipeline as the passes it expands to. */
    printf("// pipeline: ");
    mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(pm), printToFile,
                          stdout);
    printf("\n");
    fflush(stdout); /* before the diagnostics of the run, on stderr */
    if (mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(pm, op))) {
      fprintf(stderr, "dist-capi-test: the pass pipeline failed\n");
      goto done;
    }
  }
  if (!mlirOperationVerify(op)) {
    fprintf(stderr, "dist-capi-test: the result does not verify\n");
    goto done;
  }
  mlirOperationPrint(op, printToFile, stdout);
  printf("\n");
  status = errors ? 1 : 0;
  if (errors)
    fprintf(stderr, "dist-capi-test: %d error(s) reported\n", errors);

done:
  if (!mlirPassManagerIsNull(pm))
    mlirPassManagerDestroy(pm);
  if (!mlirModuleIsNull(module))
    mlirModuleDestroy(module);
  free(source);
  mlirContextDestroy(context);
  return status;
}

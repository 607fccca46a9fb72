/* A C host linking only the installed C API (Dist::DistCAPI): dist and the
 * upstream dialects in a context, a step read from a file, the no_sync
 * pipeline, the module printed. */
#include "Dist-c/Dialect.h"
#include "Dist-c/Passes.h"

#include "mlir-c/IR.h"
#include "mlir-c/RegisterEverything.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print(MlirStringRef text, void *userData) {
  fwrite(text.data, 1, text.length, (FILE *)userData);
}

int main(int argc, char **argv) {
  /* The header and the library must be of one dist release. */
  if (strcmp(mlirDistGetVersion(), DIST_VERSION_STRING) != 0) {
    fprintf(stderr, "consumer-capi: compiled against dist %s, linked %s\n",
            DIST_VERSION_STRING, mlirDistGetVersion());
    return 1;
  }
  fprintf(stderr, "consumer-capi: dist %s (%d.%d.%d), built with MLIR %s\n",
          mlirDistGetVersion(), DIST_VERSION_MAJOR, DIST_VERSION_MINOR,
          DIST_VERSION_PATCH, DIST_MLIR_VERSION_STRING);
  if (argc != 2) {
    fprintf(stderr, "usage: consumer-capi file.mlir\n");
    return 2;
  }
  FILE *file = fopen(argv[1], "rb");
  if (!file) {
    fprintf(stderr, "consumer-capi: cannot open %s\n", argv[1]);
    return 1;
  }
  static char text[1 << 20];
  size_t size = fread(text, 1, sizeof(text), file);
  fclose(file);

  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__dist__(), registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  MlirModule module = mlirDistModuleCreateParse(
      context, mlirStringRefCreate(text, size),
      mlirStringRefCreateFromCString(argv[1]));
  int rc = 1;
  if (!mlirModuleIsNull(module) &&
      mlirLogicalResultIsSuccess(mlirDistRunNoSyncPipeline(
          module, mlirStringRefCreateFromCString(""), print, stderr))) {
    mlirOperationPrint(mlirModuleGetOperation(module), print, stdout);
    rc = 0;
  }
  if (!mlirModuleIsNull(module))
    mlirModuleDestroy(module);
  mlirContextDestroy(context);
  return rc;
}

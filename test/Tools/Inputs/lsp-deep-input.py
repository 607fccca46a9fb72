# Writes the JSON-RPC session of test/Tools/dist-lsp-server-deep.test: two
# documents nested past what an 8 MB stack parses, then shutdown and exit.
import json, sys
def msg(obj): print(json.dumps(obj)); print("// -----")
msg({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":1,"rootPath":"dist","capabilities":{},"trace":"off"}})
for uri, text in [("test:///deep.mlir", "func.func @f(" + "(" * 20000),
                  ("test:///minus.mlir", "#m = affine_map<(d0) -> (" + "-" * 100000 + "d0)>\nfunc.func @f() attributes {m = #m} { return }")]:
    msg({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":uri,"languageId":"mlir","version":1,"text":text}}})
msg({"jsonrpc":"2.0","id":3,"method":"shutdown"})
print(json.dumps({"jsonrpc":"2.0","method":"exit"}))

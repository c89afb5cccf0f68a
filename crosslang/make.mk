# The cross-language test: Python, Node and C processes on one shared table
# file, then a Java one for the metrics (crosslang/run.py drives them). Included by the root Makefile; paths
# are relative to the repository root.
CROSSLANG_OUT := build/crosslang

TESTS += test-crosslang

.PHONY: test-crosslang

# The C worker is linked statically against libsds, like the C tests; the
# Java worker runs from source on the jar.
test-crosslang: ffi-c-lib node-install py-venv jvm-jar
	@mkdir -p $(CROSSLANG_OUT)
	$(CC) $(FFI_C_STRICT) crosslang/worker.c $(FFI_C_LIB)/libsds.a $(FFI_C_NATIVE_LIBS) \
		-o $(CROSSLANG_OUT)/worker
	$(PY_VENV)/bin/python crosslang/run.py $(CROSSLANG_OUT)/worker $(JVM_JAR)

# libsds (ffi-c): the C ABI, its generated header, C tests under sanitizers
# and valgrind, the demos (quickstart, shared), the benchmark and `make install`.
# Included by the root Makefile; paths are relative to the repository root.

FFI_C_CBINDGEN_VERSION := 0.29.4
FFI_C_CBINDGEN := build/tools/cbindgen-$(FFI_C_CBINDGEN_VERSION)/bin/cbindgen
FFI_C_OUT := build/ffi-c
# libsds where cargo builds it: in CARGO_TARGET_DIR when set (cargo, which the
# rules run, honours it), else in the workspace's target/.
FFI_C_LIB := $(or $(CARGO_TARGET_DIR),target)/$(RUST_HOST)/release
FFI_C_STRICT := -std=c99 -Wall -Wextra -Wpedantic -Werror -g -Iinclude -Iffi-c/tests/c
FFI_C_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# What the Rust staticlib needs (`--print native-static-libs`).
FFI_C_NATIVE_LIBS := -lgcc_s -lutil -lrt -lpthread -lm -ldl
FFI_C_TESTS := test_api test_bad_input test_threads test_shared test_agent test_keyed
FFI_C_EXAMPLES := quickstart shared
# valgrind follows fork() children without --trace-children (that is for
# exec): each child is checked, leaks included, and exits 99 on an error,
# which the tests and examples that fork treat as a failure.
FFI_C_VALGRIND := valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
FFI_C_VERSION = $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
PREFIX ?= /usr/local
# Prints libsds.so's SONAME; fails if it has none.
FFI_C_SONAME := readelf -d $(FFI_C_LIB)/libsds.so | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p' | grep .

TESTS += test-c
DEMOS += demo-c
BENCHES += bench-c

.PHONY: test-c demo-c bench-c install ffi-c-lib ffi-c-header ffi-c-header-check \
	ffi-c-rust-tests ffi-c-symbols ffi-c-sanitized ffi-c-valgrind

# cbindgen, pinned, installed once into build/tools. A debug build: it
# compiles in about half the time of a release one (a fresh CI machine pays
# it on every run) and runs for well under a second either way.
$(FFI_C_CBINDGEN):
	$(CARGO) install cbindgen --version $(FFI_C_CBINDGEN_VERSION) --locked --debug \
		--root build/tools/cbindgen-$(FFI_C_CBINDGEN_VERSION)

# Only the C artifacts, with fat LTO: cargo then compiles the dependencies as
# it does for the other bindings' libraries (bitcode for LTO), so they are
# compiled once for all. (The crate's rlib is for its Rust tests, which
# test-core runs.)
# libsds.so carries its ABI version as its SONAME (ffi-c/build.rs): a program
# linked with -lsds asks for that name, so a link of that name goes beside it.
ffi-c-lib:
	$(CARGO) rustc -p sds-ffi --lib --release --locked --target $(RUST_HOST) --crate-type cdylib,staticlib
	soname=$$($(FFI_C_SONAME)) && ln -sf libsds.so $(FFI_C_LIB)/$$soname

# Regenerates include/sds.h after a change in ffi-c/src (then commit it).
ffi-c-header: $(FFI_C_CBINDGEN)
	$(FFI_C_CBINDGEN) -q --config ffi-c/cbindgen.toml --crate sds-ffi --output include/sds.h ffi-c

# The committed header is what ffi-c/src generates, and compiles as C99 and
# C++ without a warning.
ffi-c-header-check: $(FFI_C_CBINDGEN)
	@mkdir -p $(FFI_C_OUT)
	$(FFI_C_CBINDGEN) -q --config ffi-c/cbindgen.toml --crate sds-ffi --output $(FFI_C_OUT)/sds.h ffi-c
	@diff -u include/sds.h $(FFI_C_OUT)/sds.h || { \
		echo "include/sds.h is stale: run 'make ffi-c-header' and commit it"; exit 1; }
	@printf '#include "sds.h"\nint main(void) { return sds_version() == 0; }\n' > $(FFI_C_OUT)/header.c
	@cp $(FFI_C_OUT)/header.c $(FFI_C_OUT)/header.cpp
	$(CC) -std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude -c $(FFI_C_OUT)/header.c -o $(FFI_C_OUT)/header_c.o
	$(CXX) -std=c++11 -Wall -Wextra -Wpedantic -Werror -Iinclude -c $(FFI_C_OUT)/header.cpp -o $(FFI_C_OUT)/header_cpp.o
	@echo "include/sds.h: up to date, compiles as C99 and C++11"

# The crate's Rust tests alone (test-core runs them with the workspace's).
ffi-c-rust-tests:
	$(CARGO) test -p sds-ffi --locked

# The C tests and the examples, linked statically, under ASan and UBSan.
ffi-c-sanitized: ffi-c-lib
	@mkdir -p $(FFI_C_OUT)/san
	set -e; for t in $(FFI_C_TESTS); do \
		$(CC) $(FFI_C_STRICT) $(FFI_C_SAN) -pthread ffi-c/tests/c/$$t.c $(FFI_C_LIB)/libsds.a \
			$(FFI_C_NATIVE_LIBS) -o $(FFI_C_OUT)/san/$$t; \
		$(FFI_C_OUT)/san/$$t; \
	done
	set -e; for e in $(FFI_C_EXAMPLES); do \
		$(CC) $(FFI_C_STRICT) $(FFI_C_SAN) examples/c/$$e.c $(FFI_C_LIB)/libsds.a \
			$(FFI_C_NATIVE_LIBS) -o $(FFI_C_OUT)/san/$$e; \
		$(FFI_C_OUT)/san/$$e; \
	done

# The same programs against the shared library, under valgrind.
ffi-c-valgrind: ffi-c-lib
	@mkdir -p $(FFI_C_OUT)/so
	set -e; for t in $(FFI_C_TESTS); do \
		$(CC) $(FFI_C_STRICT) -pthread ffi-c/tests/c/$$t.c -L$(FFI_C_LIB) -lsds -o $(FFI_C_OUT)/so/$$t; \
	done
	set -e; for e in $(FFI_C_EXAMPLES); do \
		$(CC) $(FFI_C_STRICT) examples/c/$$e.c -L$(FFI_C_LIB) -lsds -o $(FFI_C_OUT)/so/$$e; \
	done
	LD_LIBRARY_PATH=$(FFI_C_LIB) $(FFI_C_VALGRIND) $(FFI_C_OUT)/so/test_api
	LD_LIBRARY_PATH=$(FFI_C_LIB) $(FFI_C_VALGRIND) $(FFI_C_OUT)/so/test_bad_input
	LD_LIBRARY_PATH=$(FFI_C_LIB) $(FFI_C_VALGRIND) $(FFI_C_OUT)/so/test_threads 2000
	LD_LIBRARY_PATH=$(FFI_C_LIB) $(FFI_C_VALGRIND) $(FFI_C_OUT)/so/test_shared 500
	LD_LIBRARY_PATH=$(FFI_C_LIB) $(FFI_C_VALGRIND) $(FFI_C_OUT)/so/test_agent
	LD_LIBRARY_PATH=$(FFI_C_LIB) $(FFI_C_VALGRIND) $(FFI_C_OUT)/so/test_keyed
	LD_LIBRARY_PATH=$(FFI_C_LIB) $(FFI_C_VALGRIND) $(FFI_C_OUT)/so/quickstart
	LD_LIBRARY_PATH=$(FFI_C_LIB) $(FFI_C_VALGRIND) $(FFI_C_OUT)/so/shared

# libsds.so exports exactly the functions sds.h declares, nothing else, and
# names its ABI version.
ffi-c-symbols: ffi-c-lib
	@mkdir -p $(FFI_C_OUT)
	@nm -D --defined-only $(FFI_C_LIB)/libsds.so | awk '{ print $$3 }' | sort > $(FFI_C_OUT)/exported.txt
	@grep -vE '^ *(\*|/\*)' include/sds.h | grep -oE '\bsds_[a-z_]+\(' | tr -d '(' | sort -u \
		> $(FFI_C_OUT)/declared.txt
	@diff -u $(FFI_C_OUT)/declared.txt $(FFI_C_OUT)/exported.txt || { \
		echo "libsds.so exports differ from the functions of include/sds.h"; exit 1; }
	@echo "libsds.so: exports the $$(wc -l < $(FFI_C_OUT)/exported.txt) functions of sds.h, nothing else"
	@soname=$$($(FFI_C_SONAME)) && case "$$soname" in libsds.so.?*) ;; *) false;; esac || { \
		echo "libsds.so names no ABI version (SONAME '$$soname'; ffi-c/build.rs names it)"; exit 1; }
	@echo "libsds.so: SONAME $$($(FFI_C_SONAME))"

test-c: ffi-c-header-check ffi-c-symbols ffi-c-sanitized ffi-c-valgrind

# Installs libsds.so (as its SONAME, libsds.so linking to it), libsds.a, sds.h
# and sds.pc under $(DESTDIR)$(PREFIX).
install: ffi-c-lib
	install -d $(DESTDIR)$(abspath $(PREFIX))/lib/pkgconfig $(DESTDIR)$(abspath $(PREFIX))/include
	install -m 644 include/sds.h $(DESTDIR)$(abspath $(PREFIX))/include/sds.h
	soname=$$($(FFI_C_SONAME)) && \
		install -m 755 $(FFI_C_LIB)/libsds.so $(DESTDIR)$(abspath $(PREFIX))/lib/$$soname && \
		ln -sf $$soname $(DESTDIR)$(abspath $(PREFIX))/lib/libsds.so
	install -m 644 $(FFI_C_LIB)/libsds.a $(DESTDIR)$(abspath $(PREFIX))/lib/libsds.a
	sed -e 's|@PREFIX@|$(abspath $(PREFIX))|' -e 's|@VERSION@|$(FFI_C_VERSION)|' \
		ffi-c/sds.pc.in > $(DESTDIR)$(abspath $(PREFIX))/lib/pkgconfig/sds.pc

# Installs into build/ffi-c/prefix and builds the examples exactly as the
# README tells a user to: cc quickstart.c $(pkg-config --cflags --libs sds).
demo-c:
	$(MAKE) --no-print-directory install PREFIX=$(FFI_C_OUT)/prefix
	set -e; export PKG_CONFIG_PATH=$(abspath $(FFI_C_OUT)/prefix/lib/pkgconfig); cd examples/c && \
		for e in $(FFI_C_EXAMPLES); do \
			$(CC) $$e.c $$(pkg-config --cflags --libs sds) -o $(abspath $(FFI_C_OUT))/$$e; \
		done
	LD_LIBRARY_PATH=$(FFI_C_OUT)/prefix/lib $(FFI_C_OUT)/quickstart
	LD_LIBRARY_PATH=$(FFI_C_OUT)/prefix/lib $(FFI_C_OUT)/shared

bench-c: ffi-c-lib
	@mkdir -p $(FFI_C_OUT)
	$(CC) -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -Iinclude ffi-c/bench/enter_exit.c \
		$(FFI_C_LIB)/libsds.a $(FFI_C_NATIVE_LIBS) -o $(FFI_C_OUT)/bench_enter_exit
	$(FFI_C_OUT)/bench_enter_exit

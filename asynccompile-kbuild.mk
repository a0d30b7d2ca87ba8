# asynccompile-kbuild.mk - an unchanged Kbuild tree's compiler probes
# through $(async-shell), with no file of the tree edited.
#
#   export MAKEFILES=$(pkg-config --variable=kbuild asynccompile)
#   make -C /lib/modules/$(uname -r)/build M=$PWD modules
#
# make reads every file MAKEFILES names before the makefiles it was asked
# for, in every make of a build (sub-makes inherit MAKEFILES through the
# environment, `make -f` ones included).  This one loads the plugin
# through its Kbuild entry point, which:
#  - makes try-run, cc-option, cc-option-yn, cc-disable-warning,
#    as-option, as-instr, ld-option and hostcc-option make functions, so
#    that $(call NAME,...) comes to the plugin whenever Kbuild defines them
#    (after this file is read, and again in every sub-make);
#  - in a tree that has read scripts/Kbuild.include (Linux, out-of-tree
#    modules, BusyBox, U-Boot), answers a macro whose value is one
#    $(shell ...) through $(async-shell ...): speculated from the last
#    run's record, and with the answer cache on (pure answers only;
#    `cache: false` in a configuration file turns it off);
#  - anywhere else, expands the macro exactly as $(call) would.
# See asynccompile(7), "KBUILD: ZERO EDITS THROUGH MAKEFILES".
#
# A missing plugin leaves the build as it would be without this file, with
# one line on stderr from the top-level make.  `-load` alone would not do:
# make treats an object it failed to load as a makefile to remake, and
# stops with "No rule to make target" when the file does not exist.
#
# `make install` writes the plugin's installed path on the next line.
ifneq ($(wildcard $(dir $(lastword $(MAKEFILE_LIST)))asynccompile.so),)
-load $(dir $(lastword $(MAKEFILE_LIST)))asynccompile.so(asynccompile_kbuild_gmk_setup)
endif
ifeq ($(filter $(dir $(lastword $(MAKEFILE_LIST)))asynccompile.so,$(.LOADED)),)
ifeq ($(MAKELEVEL),0)
$(warning asynccompile-kbuild.mk: $(dir $(lastword $(MAKEFILE_LIST)))asynccompile.so $(if $(wildcard $(dir $(lastword $(MAKEFILE_LIST)))asynccompile.so),could not be loaded,does not exist): building without it)
endif
endif

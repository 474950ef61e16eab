// What doc/runtime.md's fragments take from the text around them (declared only: the test compiles,
// it neither links nor runs).
#pragma once

extern int argc;
extern char** argv;

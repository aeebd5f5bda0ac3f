# Prints every `use` line that lists several items on one line, which the
# kernel's vertical import layout (Documentation/rust/coding-guidelines.rst)
# does not allow. Putting `//` after the last item of each brace list and
# running rustfmt gives the vertical form.
/^[ \t]*(pub(\([a-z]+\))? )?use / { inuse = 1 }
inuse {
	line = $0
	sub(/\/\/.*/, "", line)
	if (line ~ /\{[^}]*,[^}]*\}/ || line ~ /,[ \t]*[A-Za-z_{*]/)
		print FILENAME ":" FNR ": " $0
}
inuse && /;[ \t]*(\/\/.*)?$/ { inuse = 0 }

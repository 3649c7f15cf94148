# Syscall-heavy bash workload for bench/run: subshells, command
# substitutions and pipelines fork a process each time, plus small file
# writes and reads. No external program is executed, so it runs under
# qemu-user without binfmt_misc (qemu cannot follow execve by itself).
n=${1:-1000}
sum=0
for ((i = 0; i < n; i++)); do
    x=$(echo "$i")                      # fork (command substitution)
    (exit $((i % 3))); rc=$?            # fork (subshell)
    echo "$i $x" >line.txt              # open/write/close
    read -r a b <line.txt               # open/read/close
    echo "$b" | { read -r v; exit $((v % 5)); }   # pipeline: two forks
    sum=$((sum + a + rc + $?))
done
echo "sum=$sum"

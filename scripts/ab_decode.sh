for v in old new new2; do
  bin=.device/bin/qgemm; [ $v = old ] && bin=.device/bin/qgemm_old
  env=""; [ $v = new2 ] && env="QGEMM_CTAS_PER_SM=2"
  echo "== $v"; env $env QGEMM_CACHE_DIR=/tmp/qc $bin bench bench/recipes/decode_tune.yaml --out $OUT/ab_$v.json > $OUT/ab_$v.log 2>&1; grep -E "^\s+(1|16) jit|N=" $OUT/ab_$v.log
done

# peer_route.jq -- jq baseline for `badgeflow filter`: run as `jq -c -f peer_route.jq`.
# One output line per input object: {"seq":n,"path":...}. A push envelope
# ({"op":"push","payload":{...}}) is routed by its payload; a chat push goes to
# root.chat.<thread-id>, a promotion to root.promotion.<campaign>, anything else
# to null. seq counts JSON inputs (jq skips blank lines and stops at bad JSON).
foreach (., inputs) as $e (0; . + 1;
  ($e | if .op == "push" then .payload else . end) as $p
  | { seq: .,
      path: ( ($p.aps["thread-id"]? // null) as $t
            | if $t != null then "root.chat.\($t)"
              else ($p.promo.campaign? // null) as $c
                   | if $c != null then "root.promotion.\($c)" else null end
              end ) })
